package budget

import (
	"math/rand/v2"
	"testing"
	"time"
)

// 2025-01-06 is a Monday.
func TestActive(t *testing.T) {
	tests := []struct {
		name   string
		budget Budget
		now    string
		want   bool
	}{
		{"no schedule is always active", Budget{Nodes: "1"}, "2025-01-06T03:04:05Z", true},
		{"business hours, one second before", scheduled(0, "0", "0 9 * * mon-fri", "8h"), "2025-01-06T08:59:59Z", false},
		{"business hours, at the hit", scheduled(0, "0", "0 9 * * mon-fri", "8h"), "2025-01-06T09:00:00Z", true},
		{"business hours, last second", scheduled(0, "0", "0 9 * * mon-fri", "8h"), "2025-01-06T16:59:59Z", true},
		{"business hours, end is exclusive", scheduled(0, "0", "0 9 * * mon-fri", "8h"), "2025-01-06T17:00:00Z", false},
		{"business hours, weekend", scheduled(0, "0", "0 9 * * mon-fri", "8h"), "2025-01-11T10:00:00Z", false},
		{"sub-second, inside", scheduled(0, "0", "0 9 * * *", "1m"), "2025-01-06T09:00:59.999Z", true},
		{"sub-second, just after the hit", scheduled(0, "0", "0 9 * * *", "1m"), "2025-01-06T09:00:00.5Z", true},
		{"the clock's zone does not matter", scheduled(0, "0", "0 9 * * *", "1h"), "2025-01-06T10:30:00+01:00", true},
		{"the clock's zone does not matter, outside", scheduled(0, "0", "0 9 * * *", "1h"), "2025-01-06T09:30:00+01:00", false},
		{"across midnight, before", scheduled(0, "0", "0 22 * * *", "4h"), "2025-01-06T21:59:59Z", false},
		{"across midnight, same day", scheduled(0, "0", "0 22 * * *", "4h"), "2025-01-06T23:30:00Z", true},
		{"across midnight, next day", scheduled(0, "0", "0 22 * * *", "4h"), "2025-01-07T01:59:59Z", true},
		{"across midnight, ended", scheduled(0, "0", "0 22 * * *", "4h"), "2025-01-07T02:00:00Z", false},
		{"across a month end", scheduled(0, "0", "0 20 31 * *", "8h"), "2025-02-01T03:59:59Z", true},
		{"across a month end, ended", scheduled(0, "0", "0 20 31 * *", "8h"), "2025-02-01T04:00:00Z", false},
		{"February has no 31st", scheduled(0, "0", "0 20 31 * *", "8h"), "2025-03-01T03:00:00Z", false},
		{"across a year end", scheduled(0, "0", "0 23 31 12 *", "2h"), "2026-01-01T00:30:00Z", true},
		{"longer than the period: hourly for 90m", scheduled(0, "0", "@hourly", "90m"), "2025-01-06T10:59:59Z", true},
		{"longer than the period: daily for 36h, day two", scheduled(0, "0", "0 0 * * *", "36h"), "2025-01-07T23:59:59Z", true},
		{"weekly for 36h, day two, still on", scheduled(0, "0", "0 0 * * mon", "36h"), "2025-01-07T11:59:59Z", true},
		{"weekly for 36h, day two, off", scheduled(0, "0", "0 0 * * mon", "36h"), "2025-01-07T12:00:00Z", false},
		{"weekly for 8 days, never off", scheduled(0, "0", "0 0 * * mon", "192h"), "2025-01-12T23:59:59Z", true},
		{"a schedule that never fires is always active", scheduled(0, "0", "0 0 30 2 *", "1h"), "2025-07-01T12:00:00Z", true},
		{"a zero duration is never active", scheduled(0, "0", "@hourly", "0m"), "2025-01-06T10:00:00Z", false},
		{"a schedule without duration is never active", Budget{Nodes: "0", Schedule: Ptr("@hourly")}, "2025-01-06T10:00:00Z", false},
		{"a duration without schedule blocks, never active", Budget{Nodes: "0", Duration: Ptr("1h")}, "2025-01-06T10:00:00Z", false},
		{"an invalid cron blocks, never active", scheduled(0, "0", "0 9 * * sat-sun", "24h"), "2025-01-11T10:00:00Z", false},
		{"@every, which the CRD rejects, compares its delay", scheduled(0, "0", "@every 5m", "10m"), "2025-01-06T10:00:00Z", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Compile(tt.budget).Active(instant(t, tt.now)); got != tt.want {
				t.Errorf("Active(%s) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}

func TestBlocked(t *testing.T) {
	tests := []struct {
		budget Budget
		want   string
	}{
		{scheduled(2, "0", "0 9 * * sat-sun", "24h"), `spec.disruption.budgets[2].schedule "0 9 * * sat-sun" is not a valid cron: beginning of range (6) beyond end of range (0): sat-sun; use "0 9 * * sat,sun"`},
		{Budget{Index: 1, Nodes: "0", Duration: Ptr("1h")}, `spec.disruption.budgets[1] has a duration but no schedule, and Karpenter parses the missing schedule as an invalid cron (expected exactly 5 fields, found 0: [])`},
		{scheduled(0, "0", "@daily", "1d"), `spec.disruption.budgets[0].duration "1d" cannot be read as a duration: time: unknown unit "d" in duration "1d"`},
		{scheduled(0, "0", "@daily", "1h"), ""},
		{Budget{Nodes: "oops"}, ""}, // nodes only block while active; see Allowed
	}
	for _, tt := range tests {
		if got := Compile(tt.budget).Blocked(); got != tt.want {
			t.Errorf("Blocked() = %q\nwant %q", got, tt.want)
		}
	}
}

func TestLimitRoundsPercentagesUp(t *testing.T) {
	tests := []struct {
		nodes string
		count int
		want  int
	}{
		{"10%", 0, 0}, {"10%", 1, 1}, {"10%", 19, 2}, {"10%", 21, 3}, {"10%", 20, 2},
		{"0%", 50, 0}, {"100%", 21, 21}, {"50%", 21, 11}, {"1%", 1000, 10}, {"1%", 1001, 11},
		{"5", 0, 5}, {"0", 10, 0}, {"007", 3, 7},
	}
	for _, tt := range tests {
		got, err := Compile(Budget{Nodes: tt.nodes}).Limit(tt.count)
		if err != nil || got != tt.want {
			t.Errorf("Limit(%q of %d) = %d, %v; want %d", tt.nodes, tt.count, got, err, tt.want)
		}
	}
	if _, err := Compile(Budget{Index: 4, Nodes: "ten"}).Limit(3); err == nil || err.Error() != `spec.disruption.budgets[4].nodes "ten" is neither a whole number nor a percentage` {
		t.Errorf("Limit of \"ten\" error = %v", err)
	}
}

func TestWindows(t *testing.T) {
	const day = "2025-01-06T00:00:00Z"
	w := func(from, to string) Window { return Window{instant(t, from), instant(t, to)} }
	tests := []struct {
		name     string
		budget   Budget
		from, to string
		want     []Window
	}{
		{"across midnight, clipped at both ends", scheduled(0, "0", "0 22 * * *", "4h"), day, "2025-01-08T00:00:00Z", []Window{
			w(day, "2025-01-06T02:00:00Z"), w("2025-01-06T22:00:00Z", "2025-01-07T02:00:00Z"), w("2025-01-07T22:00:00Z", "2025-01-08T00:00:00Z")}},
		{"overlapping hits merge", scheduled(0, "0", "0 9,12 * * *", "4h"), day, "2025-01-07T00:00:00Z", []Window{w("2025-01-06T09:00:00Z", "2025-01-06T16:00:00Z")}},
		{"touching hits merge", scheduled(0, "0", "0 9,13 * * *", "4h"), day, "2025-01-07T00:00:00Z", []Window{w("2025-01-06T09:00:00Z", "2025-01-06T17:00:00Z")}},
		{"every six hours for eight covers the day", scheduled(0, "0", "0 */6 * * *", "8h"), day, "2025-01-07T00:00:00Z", []Window{w(day, "2025-01-07T00:00:00Z")}},
		{"every minute for a minute covers the week", scheduled(0, "0", "* * * * *", "1m"), day, "2025-01-13T00:00:00Z", []Window{w(day, "2025-01-13T00:00:00Z")}},
		{"every two minutes for one", scheduled(0, "0", "*/2 * * * *", "1m"), day, "2025-01-06T00:06:00Z", []Window{
			w(day, "2025-01-06T00:01:00Z"), w("2025-01-06T00:02:00Z", "2025-01-06T00:03:00Z"), w("2025-01-06T00:04:00Z", "2025-01-06T00:05:00Z")}},
		{"every two minutes for a year: one window", scheduled(0, "0", "*/2 * * * *", "8760h"), day, "2025-01-13T00:00:00Z", []Window{w(day, "2025-01-13T00:00:00Z")}},
		{"yearly for 8000h, open since the last hit", scheduled(0, "0", "@yearly", "8000h"), day, "2025-01-13T00:00:00Z", []Window{w(day, "2025-01-13T00:00:00Z")}},
		{"yearly for 100h, long closed", scheduled(0, "0", "@yearly", "100h"), day, "2025-01-13T00:00:00Z", nil},
		{"weekly for 36h", scheduled(0, "0", "0 0 * * mon", "36h"), day, "2025-01-14T00:00:00Z", []Window{
			w(day, "2025-01-07T12:00:00Z"), w("2025-01-13T00:00:00Z", "2025-01-14T00:00:00Z")}},
		{"started before from", scheduled(0, "0", "0 17 * * mon-fri", "16h"), "2025-01-07T08:00:00Z", "2025-01-07T20:00:00Z", []Window{
			w("2025-01-07T08:00:00Z", "2025-01-07T09:00:00Z"), w("2025-01-07T17:00:00Z", "2025-01-07T20:00:00Z")}},
		{"a blocked budget has no windows", scheduled(0, "0", "0 9 * * sat-sun", "24h"), day, "2025-01-07T00:00:00Z", nil},
		{"last day of a 31-day month", scheduled(0, "0", "0 20 31 * *", "8h"), "2025-01-31T00:00:00Z", "2025-03-02T00:00:00Z", []Window{
			w("2025-01-31T20:00:00Z", "2025-02-01T04:00:00Z")}},
		{"never fires: always, as Karpenter reads it", scheduled(0, "0", "0 0 30 2 *", "1h"), day, "2025-01-07T00:00:00Z", []Window{w(day, "2025-01-07T00:00:00Z")}},
		{"zero duration", scheduled(0, "0", "@hourly", "0h"), day, "2025-01-07T00:00:00Z", nil},
		{"always", Budget{Nodes: "1"}, day, "2025-01-07T00:00:00Z", []Window{w(day, "2025-01-07T00:00:00Z")}},
		{"empty range", Budget{Nodes: "1"}, day, day, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compile(tt.budget).Windows(instant(t, tt.from), instant(t, tt.to))
			if len(got) != len(tt.want) {
				t.Fatalf("Windows() = %v\nwant %v", got, tt.want)
			}
			for i := range got {
				if !got[i].From.Equal(tt.want[i].From) || !got[i].To.Equal(tt.want[i].To) {
					t.Fatalf("Windows()[%d] = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestReach(t *testing.T) {
	from := instant(t, "2025-01-06T00:00:00Z")
	to := from.Add(DefaultHorizon)
	tests := []struct {
		budget     Budget
		want       Reach
		neverFires bool
	}{
		{Budget{Nodes: "0"}, ActiveAlways, false},
		{scheduled(0, "0", "0 0 30 2 *", "1h"), ActiveAlways, true},
		{scheduled(0, "0", "@hourly", "60m"), ActiveAlways, false},
		{scheduled(0, "0", "@hourly", "0m"), ActiveNever, false},
		{scheduled(0, "0", "0 9 * * *", "1h"), ActiveSometimes, false},
		{scheduled(0, "0", "0 9 * * sat-sun", "24h"), ActiveNever, false},
	}
	for _, tt := range tests {
		c := Compile(tt.budget)
		if got := c.Reach(from, to); got != tt.want {
			t.Errorf("%s: Reach = %s, want %s", tt.budget.Name(), got, tt.want)
		}
		if got := c.NeverFires(from); got != tt.neverFires {
			t.Errorf("%s: NeverFires = %v, want %v", tt.budget.Name(), got, tt.neverFires)
		}
	}
}

// TestWindowsAgreeWithActive checks the window walk against Karpenter's
// instant test at every edge, just before it, and at random instants.
func TestWindowsAgreeWithActive(t *testing.T) {
	schedules := []string{"0 9 * * mon-fri", "0 22 * * *", "*/7 * * * *", "0 */5 * * *", "30 2 1,15 * *", "0 0 * * sun", "@hourly", "@daily", "15 3-5 * * 1-3", "0 20 31 * *"}
	durations := []string{"1m", "7m", "45m", "1h", "4h", "5h30m", "16h", "24h", "36h", "200h"}
	from := instant(t, "2025-01-27T13:17:00Z")
	to := from.Add(10 * 24 * time.Hour)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range schedules {
		for _, d := range durations {
			c := Compile(scheduled(0, "0", s, d))
			ws := c.Windows(from, to)
			inside := func(at time.Time) bool {
				for _, w := range ws {
					if !at.Before(w.From) && at.Before(w.To) {
						return true
					}
				}
				return false
			}
			probes := []time.Time{from, to.Add(-time.Second)}
			for _, w := range ws {
				probes = append(probes, w.From, w.From.Add(-time.Second), w.To, w.To.Add(-time.Second))
			}
			for range 200 {
				probes = append(probes, from.Add(time.Duration(rng.Int64N(int64(to.Sub(from))))))
			}
			for _, p := range probes {
				if p.Before(from) || !p.Before(to) {
					continue
				}
				if got, want := inside(p), c.Active(p); got != want {
					t.Fatalf("%q for %s at %s: in a window = %v, Active = %v (windows %v)", s, d, p, got, want, ws)
				}
			}
		}
	}
}
