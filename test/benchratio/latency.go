package benchratio

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// Latencies records how long each call of a benchmark took, so that it can
// report percentiles: a mean hides the slow calls a webhook's timeout and a
// CI job's patience are about. It records wall time and, where the
// operating system tells, the CPU time of the calling thread: on a shared
// machine the wall time's tail is other processes' turns on the CPU, the
// CPU time's tail is the call's own (garbage collection it assists with,
// say).
type Latencies struct {
	wall, cpu []time.Duration
}

// Time runs f and records how long it took.
func (l *Latencies) Time(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	start := time.Now()
	f()
	l.wall = append(l.wall, time.Since(start))
	if cpu0 >= 0 {
		l.cpu = append(l.cpu, threadCPU()-cpu0)
	}
}

// Percentile returns the p-th percentile (0 < p <= 1) of the recorded wall
// times by the nearest-rank method, or 0 when none were recorded.
func (l *Latencies) Percentile(p float64) time.Duration { return percentile(l.wall, p) }

// CPUPercentile is Percentile for the CPU times.
func (l *Latencies) CPUPercentile(p float64) time.Duration { return percentile(l.cpu, p) }

func percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	rank := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// Report adds p50-µs and p99-µs (wall), cpu-p50-µs and cpu-p99-µs to the
// benchmark's output and, against a baseline's typical duration measured in
// the same run, x-baseline-p50 and x-baseline-p99.
func (l *Latencies) Report(b *testing.B, baseline time.Duration) {
	micro := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	p50, p99 := l.Percentile(0.50), l.Percentile(0.99)
	b.ReportMetric(micro(p50), "p50-µs")
	b.ReportMetric(micro(p99), "p99-µs")
	if len(l.cpu) > 0 {
		b.ReportMetric(micro(l.CPUPercentile(0.50)), "cpu-p50-µs")
		b.ReportMetric(micro(l.CPUPercentile(0.99)), "cpu-p99-µs")
	}
	if baseline > 0 {
		b.ReportMetric(float64(p50)/float64(baseline), "x-baseline-p50")
		b.ReportMetric(float64(p99)/float64(baseline), "x-baseline-p99")
	}
}
