package budget

import (
	"fmt"
	"sort"
	"time"
)

// Stretch is a stretch of time [From, To) over which a reason's allowance
// does not change.
type Stretch struct {
	From, To time.Time
	Allowance
}

// Stretches maps each reason to its stretches, in order, covering the asked
// range without gaps.
type Stretches map[Reason][]Stretch

// At returns the allowance of reason r at t, and false when t is outside the
// timeline.
func (tl Stretches) At(r Reason, t time.Time) (Allowance, bool) {
	stretches := tl[r]
	i := sort.Search(len(stretches), func(i int) bool { return stretches[i].To.After(t) })
	if i == len(stretches) || stretches[i].From.After(t) {
		return Allowance{}, false
	}
	return stretches[i].Allowance, true
}

// MaxTimelineSpan bounds Timeline's range so that a typo in --to cannot ask
// for centuries of windows.
const MaxTimelineSpan = 366 * 24 * time.Hour

// Timeline computes the allowance of every reason over [from, to). See
// Set.Timeline.
func Timeline(budgets []Budget, counts Counts, from, to time.Time) (Stretches, error) {
	return CompileSet(budgets).Timeline(counts, from, to)
}

// Timeline computes the allowance of every reason over [from, to) in UTC.
// Stretch edges are exact window edges (hit and hit+duration, merged where
// windows overlap); adjacent stretches with the same allowance and binding
// budgets are merged.
func (s *Set) Timeline(counts Counts, from, to time.Time) (Stretches, error) {
	if err := counts.Check(); err != nil {
		return nil, err
	}
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) {
		return nil, fmt.Errorf("timeline from %s is not before to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if to.Sub(from) > MaxTimelineSpan {
		return nil, fmt.Errorf("timeline from %s to %s spans more than %d days", from.Format(time.RFC3339), to.Format(time.RFC3339), MaxTimelineSpan/(24*time.Hour))
	}
	windows := make([][]Window, len(s.budgets))
	for i, c := range s.budgets {
		windows[i] = c.Windows(from, to)
	}
	return s.timeline(counts, from, to, windows), nil
}

// timeline is Timeline over checked bounds, with each budget's windows
// within them.
func (s *Set) timeline(counts Counts, from, to time.Time, windows [][]Window) Stretches {
	edges := []time.Time{from, to}
	for _, ws := range windows {
		for _, w := range ws {
			edges = append(edges, w.From, w.To)
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].Before(edges[j]) })
	edges = compactTimes(edges)

	tl := make(Stretches, len(s.reasons))
	active := make([]bool, len(s.budgets))
	cursor := make([]int, len(s.budgets)) // index of the next window per budget
	for e := 0; e+1 < len(edges); e++ {
		at, until := edges[e], edges[e+1]
		for i, ws := range windows {
			for cursor[i] < len(ws) && !ws[cursor[i]].To.After(at) {
				cursor[i]++
			}
			active[i] = cursor[i] < len(ws) && !ws[cursor[i]].From.After(at)
		}
		for _, r := range s.reasons {
			a := s.allowance(r, active, counts)
			stretches := tl[r]
			if n := len(stretches); n > 0 && stretches[n-1].Same(a) {
				stretches[n-1].To = until
				continue
			}
			tl[r] = append(stretches, Stretch{From: at, To: until, Allowance: a})
		}
	}
	return tl
}

func compactTimes(ts []time.Time) []time.Time {
	out := ts[:0]
	for _, t := range ts {
		if len(out) == 0 || !out[len(out)-1].Equal(t) {
			out = append(out, t)
		}
	}
	return out
}

// DefaultHorizon is how far ahead NextChange looks by default: a week covers
// every weekly schedule.
const DefaultHorizon = 7 * 24 * time.Hour

// Change is when a reason's allowance next changes and what it becomes.
type Change struct {
	// At is the instant of the change; zero when nothing changes within the
	// horizon.
	At time.Time
	// To is the allowance from At on.
	To Allowance
}

// NextChange returns, per reason, when the allowance next changes after now,
// looking at most horizon ahead: the controller requeues at the earliest.
func (s *Set) NextChange(counts Counts, now time.Time, horizon time.Duration) (map[Reason]Change, error) {
	tl, err := s.Timeline(counts, now, now.Add(horizon))
	if err != nil {
		return nil, err
	}
	out := make(map[Reason]Change, len(s.reasons))
	for r, stretches := range tl {
		if len(stretches) > 1 {
			out[r] = Change{At: stretches[1].From, To: stretches[1].Allowance}
		} else {
			out[r] = Change{}
		}
	}
	return out, nil
}

// NextChange is Set.NextChange for budgets compiled on the spot.
func NextChange(budgets []Budget, counts Counts, now time.Time, horizon time.Duration) (map[Reason]Change, error) {
	return CompileSet(budgets).NextChange(counts, now, horizon)
}

// Reach says whether a budget is ever active over a range.
type Reach string

// How often a budget is active over a range.
const (
	ActiveNever     Reach = "never"
	ActiveSometimes Reach = "sometimes"
	ActiveAlways    Reach = "always"
)

// Reach reports whether the budget is active never, sometimes or always in
// [from, to). A schedule that never fires (0 0 30 2 *) is "always": that is
// how Karpenter reads it. A blocked budget is "never"; see Blocked.
func (c *Compiled) Reach(from, to time.Time) Reach {
	ws := c.Windows(from, to)
	switch {
	case len(ws) == 0:
		return ActiveNever
	case len(ws) == 1 && ws[0].From.Equal(from.UTC()) && ws[0].To.Equal(to.UTC()):
		return ActiveAlways
	default:
		return ActiveSometimes
	}
}

// NeverFires reports whether the schedule has no hit in the five years after
// from, which robfig/cron gives up at and Karpenter then treats as active.
func (c *Compiled) NeverFires(from time.Time) bool {
	return c.schedule != nil && c.schedule.Next(from.UTC()).IsZero()
}

// NextAllowed returns, per reason, the first instant in [now, now+horizon)
// at which the reason allows at least one more disruption (unlimited
// counts), assuming the nodes disrupting now are still disrupting then: now
// itself when it allows one already, the zero time when no window within the
// horizon allows one. `karpgate explain` says "next allows one at" with it.
func (s *Set) NextAllowed(counts Counts, now time.Time, horizon time.Duration) (map[Reason]time.Time, error) {
	tl, err := s.Timeline(counts, now, now.Add(horizon))
	if err != nil {
		return nil, err
	}
	out := make(map[Reason]time.Time, len(s.reasons))
	for _, r := range s.reasons {
		out[r] = time.Time{}
		for _, st := range tl[r] {
			if !st.Blocked && (st.Unlimited || st.Count > 0) {
				out[r] = st.From
				break
			}
		}
	}
	return out, nil
}
