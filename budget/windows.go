package budget

import (
	"sync"
	"time"
)

// Window is a half-open stretch of time [From, To).
type Window struct {
	From, To time.Time
}

// Windows returns where the budget is active within [from, to), as sorted,
// disjoint, non-adjacent windows in UTC. Overlapping or touching schedule
// windows merge, so a duration longer than the cron period gives one long
// window. Edges are the schedule's hits, listed from its fields (firing),
// never found by scanning minute by minute. A blocked budget has no windows.
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
	if c.fires == nil {
		// @every (which the CRD rejects) is relative to the instant asked
		// about, so its answer does not change over time.
		if c.Active(from) {
			return []Window{{from, to}}
		}
		return nil
	}
	return windowsOf(c.fires, c.duration, from, to)
}

// windowsOf walks the schedule's hits in (from-d, to) and merges each
// hit's window [hit, hit+d) with the next when they overlap or touch. Of
// the hits up to from, only the latest matters: its window covers the
// others' from from on, and skipping them keeps a long duration over a
// frequent schedule (every minute for a year) from walking them all.
func windowsOf(f *firing, d time.Duration, from, to time.Time) []Window {
	start := f.spec.Next(from.Add(-d))
	if start.IsZero() {
		// No hit for five years: Karpenter reads the zero time as active.
		return []Window{{from, to}}
	}
	if d <= 0 {
		return nil
	}
	if latest, ok := f.latest(from.Add(-d), from); ok {
		start = latest
	}
	var out []Window
	for hit := range f.hits(start, to) {
		if n := len(out); n > 0 && !hit.After(out[n-1].To) {
			out[n-1].To = hit.Add(d)
			continue
		}
		out = append(out, Window{hit, hit.Add(d)})
	}
	if len(out) == 0 {
		return nil
	}
	out[0].From = maxTime(out[0].From, from)
	last := &out[len(out)-1]
	if last.To.Before(to) && f.spec.Next(last.To).IsZero() {
		// The last hit for five years: from there on Karpenter reads the
		// budget as active, as above.
		last.To = to
	}
	last.To = minTime(last.To, to)
	return out
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
