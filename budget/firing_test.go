package budget

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

// nextWindows is Windows found with nothing but robfig/cron's Next, one
// hit after another: the reference the walk over a firing table must
// equal.
func nextWindows(c *Compiled, from, to time.Time) []Window {
	from, to = from.UTC(), to.UTC()
	start := c.schedule.Next(from.Add(-c.duration))
	if start.IsZero() {
		return []Window{{from, to}}
	}
	if c.duration <= 0 {
		return nil
	}
	var out []Window
	for hit := start; !hit.IsZero() && hit.Before(to); hit = c.schedule.Next(hit) {
		if n := len(out); n > 0 && !hit.After(out[n-1].To) {
			out[n-1].To = hit.Add(c.duration)
			continue
		}
		out = append(out, Window{hit, hit.Add(c.duration)})
	}
	if len(out) == 0 {
		return nil
	}
	out[0].From = maxTime(out[0].From, from)
	last := &out[len(out)-1]
	if last.To.Before(to) && c.schedule.Next(last.To).IsZero() {
		last.To = to
	}
	last.To = minTime(last.To, to)
	return out
}

func hits(c *Compiled, from, to time.Time) int {
	n := 0
	for range c.fires.hits(from, to) {
		n++
	}
	return n
}

func sameWindows(a, b []Window) bool {
	return slices.EqualFunc(a, b, func(x, y Window) bool { return x.From.Equal(y.From) && x.To.Equal(y.To) })
}

// TestWindowsAgreeWithNext compares the windows found from the firing
// table with those found by calling Next hit by hit, for schedules that
// exercise every field (the day of month and day of week combined with
// AND and with OR, months, leap days, descriptors), durations shorter and
// longer than the period, and ranges that start mid-second and mid-window.
func TestWindowsAgreeWithNext(t *testing.T) {
	schedules := []string{
		"*/2 * * * *", "* * * * *", "0 9 * * mon-fri", "0 22 * * *", "*/7 * * * *", "0 */5 * * *",
		"30 2 1,15 * *", "30 2 1,15 * mon", "0 0 * * sun", "0 0 13 * fri", "@hourly", "@daily", "@weekly",
		"@monthly", "@yearly", "15 3-5 * * 1-3", "0 20 31 * *", "0 0 29 2 *", "0 0 30 2 *", "5 4 * jan,jul *",
		"59 23 28-31 * *", "0,30 8-17 * * 1-5", "0 0 ? * 6",
	}
	durations := []string{"0s", "1.5s", "59s", "1m", "45m", "4h", "36h", "9000h"}
	froms := []string{"2025-01-27T13:17:00Z", "2024-02-28T23:59:59.5Z", "2025-12-31T20:00:00Z", "2028-02-29T00:00:00Z"}
	spans := []time.Duration{time.Second, 90 * time.Minute, 50 * time.Hour, 8 * 24 * time.Hour, 40 * 24 * time.Hour}
	compared := 0
	for _, s := range schedules {
		for _, d := range durations {
			c := Compile(scheduled(0, "0", s, d))
			if c.Blocked() != "" {
				t.Fatalf("%q for %s: %s", s, d, c.Blocked())
			}
			for _, from := range froms {
				for _, span := range spans {
					at := instant(t, from)
					if hits(c, at.Add(-c.duration), at.Add(span)) > 200 {
						continue // the reference calls Next for every hit: a dense schedule's long spans would take minutes
					}
					compared++
					if got, want := c.Windows(at, at.Add(span)), nextWindows(c, at, at.Add(span)); !sameWindows(got, want) {
						t.Fatalf("%q for %s from %s over %v:\n got %v\nwant %v", s, d, from, span, got, want)
					}
				}
			}
		}
	}
	// Most combinations are sparse enough for the reference.
	if total := len(schedules) * len(durations) * len(froms) * len(spans); compared < total/2 {
		t.Fatalf("compared %d of %d combinations", compared, total)
	}
}

// TestWindowsAgreeWithNextAtRandom does the same for random schedules
// built field by field.
func TestWindowsAgreeWithNextAtRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	field := func(lo, hi int) string {
		switch rng.IntN(4) {
		case 0:
			return "*"
		case 1:
			return "*/" + strconv.Itoa(1+rng.IntN(hi-lo))
		case 2:
			a := lo + rng.IntN(hi-lo+1)
			return strconv.Itoa(a) + "-" + strconv.Itoa(a+rng.IntN(hi-a+1))
		default:
			return strconv.Itoa(lo+rng.IntN(hi-lo+1)) + "," + strconv.Itoa(lo+rng.IntN(hi-lo+1))
		}
	}
	base := instant(t, "2025-01-01T00:00:00Z")
	for range 400 {
		s := field(0, 59) + " " + field(0, 23) + " " + field(1, 31) + " " + field(1, 12) + " " + field(0, 6)
		d := time.Duration(rng.Int64N(int64(48 * time.Hour)))
		c := Compile(scheduled(0, "0", s, d.String()))
		if c.Blocked() != "" {
			continue
		}
		from := base.Add(time.Duration(rng.Int64N(int64(4 * 365 * 24 * time.Hour))))
		to := from.Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
		if hits(c, from.Add(-d), to) > 500 {
			continue
		}
		if got, want := c.Windows(from, to), nextWindows(c, from, to); !sameWindows(got, want) {
			t.Fatalf("%q for %s from %s to %s:\n got %v\nwant %v", s, d, from, to, got, want)
		}
	}
}
