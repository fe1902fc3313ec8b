package budget

import (
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Window is a half-open stretch of time [From, To).
type Window struct {
	From, To time.Time
}

// Windows returns where the budget is active within [from, to), as sorted,
// disjoint, non-adjacent windows in UTC. Overlapping or touching schedule
// windows merge, so a duration longer than the cron period gives one long
// window. Edges come from cron Next() and a binary search over it, never
// from scanning minute by minute. A blocked budget has no windows.
func (c *Compiled) Windows(from, to time.Time) []Window {
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) {
		return nil
	}
	if c.always {
		return []Window{{from, to}}
	}
	if c.schedule == nil {
		return nil
	}
	spec, ok := c.schedule.(*cron.SpecSchedule)
	if !ok {
		// @every (which the CRD rejects) is relative to the instant asked
		// about, so its answer does not change over time.
		if c.Active(from) {
			return []Window{{from, to}}
		}
		return nil
	}
	w := spanWalker{spec: spec, d: c.duration}
	return w.windows(from, to)
}

type spanWalker struct {
	spec *cron.SpecSchedule
	d    time.Duration
}

func (w spanWalker) windows(from, to time.Time) []Window {
	start := w.spec.Next(from.Add(-w.d))
	if start.IsZero() {
		// No hit for five years: Karpenter reads the zero time as active.
		return []Window{{from, to}}
	}
	if w.d <= 0 {
		return nil
	}
	var out []Window
	for start.Before(to) {
		end := w.unionEnd(start, to)
		out = append(out, Window{maxTime(start, from), minTime(end, to)})
		if !end.Before(to) {
			break
		}
		next := w.spec.Next(end)
		if next.IsZero() {
			out[len(out)-1].To = to
			break
		}
		start = next
	}
	return out
}

// unionEnd is where the active stretch that starts with hit h ends: each hit
// inside a window extends it by another duration. It stops early once the
// end reaches limit.
func (w spanWalker) unionEnd(h, limit time.Time) time.Time {
	end := h.Add(w.d)
	for end.Before(limit) {
		q := w.lastHitIn(h, end)
		if q.IsZero() {
			return end
		}
		h, end = q, q.Add(w.d)
	}
	return end
}

// lastHitIn returns the latest hit in (after, until], or the zero time.
// A few hits are walked one by one (the usual case: one or two hits per
// window); beyond that, Next(a) <= until holds exactly for a before the last
// hit, so a binary search over whole seconds (cron's resolution) finds it in
// a few Next calls instead of one per hit.
func (w spanWalker) lastHitIn(after, until time.Time) time.Time {
	const walkedHits = 4
	last := w.spec.Next(after)
	if last.IsZero() || last.After(until) {
		return time.Time{}
	}
	for i := 0; i < walkedHits; i++ {
		next := w.spec.Next(last)
		if next.IsZero() || next.After(until) {
			return last
		}
		last = next
		if i == 0 {
			if atEnd := w.spec.Next(until.Add(-time.Second)); atEnd.Equal(until) {
				return atEnd // back-to-back windows, the common case of long durations
			}
		}
	}
	lo, hi := last, until // Next(lo) <= until < Next(hi)
	if next := w.spec.Next(lo); next.IsZero() || next.After(until) {
		return last
	}
	for hi.Sub(lo) > time.Second {
		step := (hi.Sub(lo) / 2).Truncate(time.Second)
		if step < time.Second {
			step = time.Second
		}
		mid := lo.Add(step)
		if next := w.spec.Next(mid); !next.IsZero() && !next.After(until) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return w.spec.Next(lo)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// SpanWindows remembers where scheduled budgets are active within analysis
// spans, by schedule, duration and span: NodePools mostly copy their
// budgets' schedules from one another and differ in their node counts, and
// finding a schedule's windows is most of what analysing a span costs.
// Safe for concurrent use; a nil SpanWindows remembers nothing.
type SpanWindows struct {
	mu      sync.Mutex
	limit   int
	entries map[spanWindowsKey][]Window
}

// spanWindowsKey names a span to the nanosecond: a window that is open at
// the span's start begins there, so two starts within one second have
// different windows.
type spanWindowsKey struct {
	schedule         string
	duration         time.Duration
	fromSec, toSec   int64
	fromNsec, toNsec int
}

// NewSpanWindows remembers the windows of at most limit schedules and
// spans; past that it starts over rather than grow with its input.
func NewSpanWindows(limit int) *SpanWindows {
	return &SpanWindows{limit: limit, entries: map[spanWindowsKey][]Window{}}
}

// of is c.Windows(from, to), remembered when c has a parsed schedule (an
// unscheduled budget's windows cost nothing to find, and a blocked one has
// none). The windows returned are shared: callers must not modify them.
func (sw *SpanWindows) of(c *Compiled, from, to time.Time) []Window {
	if sw == nil || c.schedule == nil {
		return c.Windows(from, to)
	}
	key := spanWindowsKey{schedule: *c.Schedule, duration: c.duration,
		fromSec: from.Unix(), toSec: to.Unix(), fromNsec: from.Nanosecond(), toNsec: to.Nanosecond()}
	sw.mu.Lock()
	ws, ok := sw.entries[key]
	sw.mu.Unlock()
	if ok {
		return ws
	}
	ws = c.Windows(from, to)
	sw.mu.Lock()
	if len(sw.entries) >= sw.limit {
		clear(sw.entries)
	}
	sw.entries[key] = ws
	sw.mu.Unlock()
	return ws
}
