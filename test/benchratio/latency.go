package benchratio

import (
	"slices"
	"testing"
	"time"
)

// Latencies records how long each call of a benchmark took, so that it can
// report percentiles: a mean hides the slow calls a webhook's timeout and a
// CI job's patience are about.
type Latencies struct {
	samples []time.Duration
}

// Time runs f and records how long it took.
func (l *Latencies) Time(f func()) {
	start := time.Now()
	f()
	l.samples = append(l.samples, time.Since(start))
}

// Percentile returns the p-th percentile (0 < p <= 1) of the recorded
// durations by the nearest-rank method, or 0 when none were recorded.
func (l *Latencies) Percentile(p float64) time.Duration {
	if len(l.samples) == 0 {
		return 0
	}
	sorted := slices.Clone(l.samples)
	slices.Sort(sorted)
	rank := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// Report adds p50-µs and p99-µs to the benchmark's output, and, against a
// baseline's typical duration measured in the same run, x-baseline-p50 and
// x-baseline-p99.
func (l *Latencies) Report(b *testing.B, baseline time.Duration) {
	p50, p99 := l.Percentile(0.50), l.Percentile(0.99)
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
	if baseline > 0 {
		b.ReportMetric(float64(p50)/float64(baseline), "x-baseline-p50")
		b.ReportMetric(float64(p99)/float64(baseline), "x-baseline-p99")
	}
}
