package budget

import (
	"fmt"
	"strings"
	"time"
)

// maxDescribedStretches keeps a description readable; hourly schedules
// would otherwise list a hundred stretches.
const maxDescribedStretches = 6

// DescribeWindows says in words when the windows (over AnalysisSpan from the
// Monday start) are open, in UTC: "every week: Tue–Fri 09:00–17:00 and
// Sat 09:00–Mon 17:00 (UTC)". When the second week differs from the first
// (a monthly schedule), it describes the first week with its date.
func DescribeWindows(ws []Window, start time.Time) string {
	first, second := splitWeeks(ws, start)
	weekly := sameShifted(first, second, Week)
	if weekly {
		first = wrapAround(first, start)
	}
	groups := groupDaily(first)
	parts := make([]string, 0, len(groups))
	for i, g := range groups {
		if i == maxDescribedStretches {
			parts = append(parts, fmt.Sprintf("%d more", len(groups)-i))
			break
		}
		parts = append(parts, g)
	}
	list := joinAnd(parts)
	if weekly {
		return "every week: " + list + " (UTC)"
	}
	return fmt.Sprintf("in the week of Monday %s: %s (UTC)", start.Format("2006-01-02"), list)
}

// splitWeeks cuts windows at the week boundary.
func splitWeeks(ws []Window, start time.Time) (first, second []Window) {
	mid := start.Add(Week)
	for _, w := range ws {
		if w.From.Before(mid) {
			first = append(first, Window{From: w.From, To: minTime(w.To, mid)})
		}
		if w.To.After(mid) {
			second = append(second, Window{From: maxTime(w.From, mid), To: w.To})
		}
	}
	return first, second
}

func sameShifted(a, b []Window, by time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].From.Add(by).Equal(b[i].From) || !a[i].To.Add(by).Equal(b[i].To) {
			return false
		}
	}
	return true
}

// wrapAround joins a window that runs to the end of a weekly pattern with
// the one that starts it (Sat 09:00–Mon 00:00 and Mon 00:00–17:00 are one
// stretch, Sat 09:00–Mon 17:00).
func wrapAround(ws []Window, start time.Time) []Window {
	n := len(ws)
	if n < 2 || !ws[0].From.Equal(start) || !ws[n-1].To.Equal(start.Add(Week)) {
		return ws
	}
	joined := Window{From: ws[n-1].From, To: ws[0].To.Add(Week)}
	return append(append([]Window{}, ws[1:n-1]...), joined)
}

// groupDaily writes windows, joining windows on consecutive days that
// open at the same time for the same length into runs: "Mon–Fri
// 09:00–17:00". Runs are listed by their first opening.
func groupDaily(ws []Window) []string {
	type run struct{ first, last Window }
	type shape struct{ opensAt, length time.Duration }
	var runs []*run
	extending := map[shape]*run{}
	for _, w := range ws {
		key := shape{w.From.Sub(w.From.Truncate(24 * time.Hour)), w.To.Sub(w.From)}
		if r, ok := extending[key]; ok && key.length < 24*time.Hour && w.From.Sub(r.last.From) == 24*time.Hour {
			r.last = w
			continue
		}
		r := &run{first: w, last: w}
		runs = append(runs, r)
		extending[key] = r
	}
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		out = append(out, describeRun(r.first, r.last))
	}
	return out
}

func describeRun(first, last Window) string {
	if first.To.Sub(first.From) == Week {
		return "all week"
	}
	if !last.From.Equal(first.From) {
		// Runs only join windows shorter than a day: longer ones starting a
		// day apart would overlap, and the timeline merges those.
		return fmt.Sprintf("%s–%s %s–%s", day(first.From), day(last.From), clock(first.From), endClock(first))
	}
	if first.To.Sub(first.From) < 24*time.Hour {
		return fmt.Sprintf("%s %s–%s", day(first.From), clock(first.From), endClock(first))
	}
	return fmt.Sprintf("%s %s–%s %s", day(first.From), clock(first.From), day(first.To), clock(first.To))
}

// endClock is the closing time of a window shorter than a day, said from
// its opening day: 24:00 for midnight, "09:00 next day" past it.
func endClock(w Window) string {
	opening := w.From.Truncate(24 * time.Hour)
	switch next := opening.Add(24 * time.Hour); {
	case w.To.Equal(next):
		return "24:00"
	case w.To.After(next):
		return clock(w.To) + " next day"
	}
	return clock(w.To)
}

func day(t time.Time) string   { return t.Weekday().String()[:3] }
func clock(t time.Time) string { return t.Format("15:04") }

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
