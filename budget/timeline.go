package budget

import (
	"fmt"
	"slices"
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
// within them. The allowances at an edge depend only on which budgets are
// active there, and a schedule that opens and closes all week switches
// between a few such sets: each set's allowances are computed once. The
// stretches share their Binding slices; nobody modifies them.
func (s *Set) timeline(counts Counts, from, to time.Time, windows [][]Window) Stretches {
	n := 2
	for _, ws := range windows {
		n += 2 * len(ws)
	}
	edges := make([]time.Time, 0, n)
	edges = append(edges, from, to)
	for _, ws := range windows {
		for _, w := range ws {
			edges = append(edges, w.From, w.To)
		}
	}
	slices.SortFunc(edges, time.Time.Compare)
	edges = compactTimes(edges)

	byReason := make([][]Stretch, len(s.reasons))
	active := make([]bool, len(s.budgets))
	cursor := make([]int, len(s.budgets)) // index of the next window per budget
	// A budget list longer than a mask holds (the CRD allows 50) is
	// computed edge by edge.
	keyed := len(s.budgets) <= 64
	known := map[uint64][]Allowance{}
	for e := 0; e+1 < len(edges); e++ {
		at, until := edges[e], edges[e+1]
		var mask uint64
		for i, ws := range windows {
			for cursor[i] < len(ws) && !ws[cursor[i]].To.After(at) {
				cursor[i]++
			}
			active[i] = cursor[i] < len(ws) && !ws[cursor[i]].From.After(at)
			if active[i] && keyed {
				mask |= 1 << uint(i)
			}
		}
		allowances, ok := known[mask]
		if !ok || !keyed {
			allowances = make([]Allowance, len(s.reasons))
			for j, r := range s.reasons {
				allowances[j] = s.allowance(r, active, counts)
			}
			if keyed {
				known[mask] = allowances
			}
		}
		for j, a := range allowances {
			stretches := byReason[j]
			if n := len(stretches); n > 0 && stretches[n-1].Same(a) {
				stretches[n-1].To = until
				continue
			}
			byReason[j] = append(stretches, Stretch{From: at, To: until, Allowance: a})
		}
	}
	tl := make(Stretches, len(s.reasons))
	for j, r := range s.reasons {
		tl[r] = byReason[j]
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
	out := make(map[Reason]Change, len(s.reasons))
	err := s.lookAhead(counts, now, horizon, func(r Reason, stretches []Stretch, whole bool) bool {
		if len(stretches) > 1 {
			out[r] = Change{At: stretches[1].From, To: stretches[1].Allowance}
			return true
		}
		out[r] = Change{}
		return whole
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lookAheadSteps are the spans lookAhead tries before the whole horizon:
// most allowances change within the hour or the day, and a week's timeline
// of a schedule every two minutes costs a hundred times an hour's. The
// controller asks this of every NodePool at every reconcile.
var lookAheadSteps = []time.Duration{time.Hour, 24 * time.Hour}

// lookAhead calls found with each reason's timeline over ever longer spans
// from now, up to horizon, until found has settled every reason. whole says
// the span is the whole horizon; found reports whether the reason is
// settled. Stretches that end before a span's end are those of the whole
// horizon: a timeline's edges within a span do not depend on its end.
func (s *Set) lookAhead(counts Counts, now time.Time, horizon time.Duration, found func(r Reason, stretches []Stretch, whole bool) bool) error {
	pending := slices.Clone(s.reasons)
	for _, span := range append(slices.Clone(lookAheadSteps), horizon) {
		whole := span >= horizon
		if whole {
			span = horizon
		}
		tl, err := s.Timeline(counts, now, now.Add(span))
		if err != nil {
			return err
		}
		pending = slices.DeleteFunc(pending, func(r Reason) bool { return found(r, tl[r], whole) })
		if whole || len(pending) == 0 {
			return nil
		}
	}
	return nil
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
	out := make(map[Reason]time.Time, len(s.reasons))
	err := s.lookAhead(counts, now, horizon, func(r Reason, stretches []Stretch, whole bool) bool {
		out[r] = time.Time{}
		for _, st := range stretches {
			if !st.Blocked && (st.Unlimited || st.Count > 0) {
				out[r] = st.From
				return true
			}
		}
		return whole
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
