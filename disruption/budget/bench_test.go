package budget

import (
	"fmt"
	"testing"
	"time"
)

// benchBudgets is a realistic NodePool: the docs' business-hours example, a
// nightly drift window and the default-sized cap.
func benchBudgets(i int) []Budget {
	return []Budget{
		scheduled(0, "0", "0 9 * * mon-fri", "8h", "Drifted", "Underutilized"),
		{Index: 1, Nodes: "100%", Reasons: []string{"Empty"}},
		scheduled(2, "1", fmt.Sprintf("%d 22 * * *", i%60), "4h", "Drifted"),
		{Index: 3, Nodes: "10%"},
	}
}

var benchFrom = time.Date(2025, 1, 6, 10, 0, 0, 0, time.UTC)

// nextPerBudget is the least work any implementation must do to answer
// "active now?": one cron Next per scheduled budget.
func nextPerBudget(set *Set, now time.Time) int {
	n := 0
	for _, c := range set.budgets {
		if c.schedule != nil && !c.schedule.Next(now.Add(-c.duration)).After(now) {
			n++
		}
	}
	return n
}

// nextLoop walks every schedule hit in [from, to) with bare cron Next calls:
// the floor for any timeline built from hits.
func nextLoop(set *Set, from, to time.Time) int {
	n := 0
	for _, c := range set.budgets {
		if c.schedule == nil {
			continue
		}
		for t := c.schedule.Next(from.Add(-c.duration)); !t.IsZero() && t.Before(to); t = c.schedule.Next(t) {
			n++
		}
	}
	return n
}

// minuteScan is the naive timeline: Allowed at every minute of the range.
func minuteScan(set *Set, from, to time.Time) int {
	n := 0
	for t := from; t.Before(to); t = t.Add(time.Minute) {
		a, _ := set.Allowed(20, 1, t)
		n += a[Drifted].Count
	}
	return n
}

func BenchmarkAllowed(b *testing.B) {
	set := CompileSet(benchBudgets(7))
	base := func() {
		nextPerBudget(set, benchFrom)
	}
	for b.Loop() {
		if _, err := set.Allowed(20, 1, benchFrom); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ratio(b, base), "x-bare-next")
}

// BenchmarkAllowed200NodePools is the controller's recompute: 200 compiled
// NodePools asked about now.
func BenchmarkAllowed200NodePools(b *testing.B) {
	sets := make([]*Set, 200)
	for i := range sets {
		sets[i] = CompileSet(benchBudgets(i))
	}
	base := func() {
		for _, s := range sets {
			nextPerBudget(s, benchFrom)
		}
	}
	for b.Loop() {
		for _, s := range sets {
			if _, err := s.Allowed(20, 1, benchFrom); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(ratio(b, base), "x-bare-next")
}

func BenchmarkCompileSet(b *testing.B) {
	budgets := benchBudgets(7)
	for b.Loop() {
		CompileSet(budgets)
	}
}

func BenchmarkTimelineWeek(b *testing.B) {
	set := CompileSet(benchBudgets(7))
	to := benchFrom.Add(7 * 24 * time.Hour)
	base := func() {
		nextLoop(set, benchFrom, to)
	}
	scan := func() {
		minuteScan(set, benchFrom, to)
	}
	for b.Loop() {
		if _, err := set.Timeline(20, 1, benchFrom, to); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ratio(b, base), "x-next-loop")
	b.ReportMetric(ratio(b, scan), "x-minute-scan")
}

// BenchmarkTimelineWeekDense is the worst realistic case for window merging:
// a schedule every 20 minutes whose 30-minute windows overlap all week.
func BenchmarkTimelineWeekDense(b *testing.B) {
	set := CompileSet([]Budget{scheduled(0, "1", "*/20 * * * *", "30m")})
	to := benchFrom.Add(7 * 24 * time.Hour)
	base := func() {
		nextLoop(set, benchFrom, to)
	}
	for b.Loop() {
		if _, err := set.Timeline(20, 1, benchFrom, to); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ratio(b, base), "x-next-loop")
}

// ratio is this benchmark's time per op over the baseline's, the baseline
// run in the same process right after the measured loop, as many times as
// the benchmark ran or for about a second, whichever comes first.
// (testing.Benchmark cannot nest inside a running benchmark.)
func ratio(b *testing.B, baseline func()) float64 {
	perOp := float64(b.Elapsed()) / float64(b.N)
	start := time.Now()
	runs := 0
	for runs < b.N && time.Since(start) < time.Second {
		baseline()
		runs++
	}
	return perOp / (float64(time.Since(start)) / float64(runs))
}
