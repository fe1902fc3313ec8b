package benchratio

import (
	"math"
	"testing"
	"time"
)

// Benchmark runs subject as the measured benchmark, then reports its time
// relative to each baseline under the baseline's name ("x-..." by
// convention, so the unit reads as "times the baseline").
func Benchmark(b *testing.B, subject func(), baselines map[string]func()) {
	b.ReportAllocs()
	for b.Loop() {
		subject()
	}
	b.StopTimer()
	for name, baseline := range baselines {
		b.ReportMetric(Ratio(subject, baseline), name)
	}
}

// Ratio compares subject with baseline in the same process: both run
// alternately in rounds of at least 2ms and the fastest round of each is
// kept, so load from other processes hits both alike.
func Ratio(subject, baseline func()) float64 {
	const rounds = 9
	n, m := calibrate(subject), calibrate(baseline)
	bestSubject, bestBaseline := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range rounds {
		bestSubject = min(bestSubject, timeRuns(subject, n)/time.Duration(n))
		bestBaseline = min(bestBaseline, timeRuns(baseline, m)/time.Duration(m))
	}
	return float64(bestSubject) / float64(bestBaseline)
}

func calibrate(f func()) int {
	n := 1
	for timeRuns(f, n) < 2*time.Millisecond && n < 1<<20 {
		n *= 2
	}
	return n
}

func timeRuns(f func(), n int) time.Duration {
	start := time.Now()
	for range n {
		f()
	}
	return time.Since(start)
}
