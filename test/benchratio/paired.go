package benchratio

import (
	"testing"
	"time"
)

// Paired runs subject and baseline alternately, b.N times each, timing
// every call, and reports the subject's percentiles (p50-µs, p99-µs), the
// baseline's (name-p50-µs, name-p99-µs) and their ratios (name-p50,
// name-p99). Alternating call by call puts both under the same load from
// other processes, so the ratios hold on a busy machine where the absolute
// times do not; a tail ratio is only fair when both tails saw the same
// moments. ns/op is one subject call plus one baseline call.
func Paired(b *testing.B, subject, baseline func(), name string) {
	b.Helper()
	var s, base Latencies
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Time(subject)
		base.Time(baseline)
	}
	b.StopTimer()
	micro := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	p50, p99 := s.Percentile(0.50), s.Percentile(0.99)
	b50, b99 := base.Percentile(0.50), base.Percentile(0.99)
	b.ReportMetric(micro(p50), "p50-µs")
	b.ReportMetric(micro(p99), "p99-µs")
	b.ReportMetric(micro(b50), name+"-p50-µs")
	b.ReportMetric(micro(b99), name+"-p99-µs")
	if b50 > 0 && b99 > 0 {
		b.ReportMetric(float64(p50)/float64(b50), name+"-p50")
		b.ReportMetric(float64(p99)/float64(b99), name+"-p99")
	}
}
