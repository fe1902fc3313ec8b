package budget

import (
	"iter"
	"sort"
	"time"

	"github.com/robfig/cron/v3"
)

// firing lists a parsed cron schedule's hits straight from its fields, the
// ones robfig/cron's Next would find one call at a time: the days it
// matches and the seconds of such a day it fires at. A week of a schedule
// every two minutes is 5,040 hits; walking them costs a table step each,
// where Next normalises dates tens of times per call. The webhook
// analyses a NodePool's week when it first sees its budgets, so this is
// the cost of admitting such a NodePool.
type firing struct {
	spec *cron.SpecSchedule
	// seconds are the seconds after midnight (UTC) a matching day fires at,
	// ascending.
	seconds []int32
}

// starBit is robfig/cron's mark of a field written as "*" (or "?"): Next
// combines the day of month and the day of week with AND when either has
// it, and with OR otherwise.
const starBit = 1 << 63

func newFiring(spec *cron.SpecSchedule) *firing {
	f := &firing{spec: spec}
	for h := range 24 {
		if spec.Hour&(1<<uint(h)) == 0 {
			continue
		}
		for m := range 60 {
			if spec.Minute&(1<<uint(m)) == 0 {
				continue
			}
			for s := range 60 {
				if spec.Second&(1<<uint(s)) != 0 {
					f.seconds = append(f.seconds, int32(h*3600+m*60+s))
				}
			}
		}
	}
	return f
}

// matches reports whether the schedule fires on day, as robfig/cron's
// dayMatches decides it (day is midnight UTC; budgets are UTC).
func (f *firing) matches(day time.Time) bool {
	s := f.spec
	if s.Month&(1<<uint(day.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(day.Day())) != 0
	dow := s.Dow&(1<<uint(day.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// hits yields every hit in [from, to), in order: what calling Next from
// just before from would return, one call after another, until to.
func (f *firing) hits(from, to time.Time) iter.Seq[time.Time] {
	return func(yield func(time.Time) bool) {
		from, to := from.UTC(), to.UTC()
		y, m, d := from.Date()
		for day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); day.Before(to); day = day.AddDate(0, 0, 1) {
			if !f.matches(day) {
				continue
			}
			i := 0
			if skip := from.Sub(day); skip > 0 {
				i = sort.Search(len(f.seconds), func(i int) bool { return time.Duration(f.seconds[i])*time.Second >= skip })
			}
			for _, s := range f.seconds[i:] {
				t := day.Add(time.Duration(s) * time.Second)
				if !t.Before(to) || !yield(t) {
					return
				}
			}
		}
	}
}

// latest returns the last hit in (after, at], walking back from at's day:
// the hits before it in that stretch open windows that the latest one's
// window, which reaches past at, already covers from at on.
func (f *firing) latest(after, at time.Time) (time.Time, bool) {
	after, at = after.UTC(), at.UTC()
	y, m, d := at.Date()
	for day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); day.Add(24 * time.Hour).After(after); day = day.AddDate(0, 0, -1) {
		if !f.matches(day) {
			continue
		}
		// The first second of the day past at, then the one before it.
		i := sort.Search(len(f.seconds), func(i int) bool { return day.Add(time.Duration(f.seconds[i]) * time.Second).After(at) })
		if i == 0 {
			continue
		}
		if t := day.Add(time.Duration(f.seconds[i-1]) * time.Second); t.After(after) {
			return t, true
		}
		return time.Time{}, false
	}
	return time.Time{}, false
}
