package budget

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// describeStretches renders stretches as "Mon 09:00-Mon 17:00 0 [0]" lines
// so that expectations read like a timetable.
func describeStretches(ss []Stretch) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s-%s %s %v\n", s.From.Format("Mon 15:04"), s.To.Format("Mon 15:04"), compact(s.Allowance), s.Binding)
	}
	return b.String()
}

func TestTimeline(t *testing.T) {
	week := func(t *testing.T) (time.Time, time.Time) {
		from := instant(t, "2025-01-06T00:00:00Z") // a Monday
		return from, from.Add(7 * 24 * time.Hour)
	}
	tests := []struct {
		name              string
		budgets           []Budget
		nodes, disrupting int
		want              map[Reason]string
	}{
		{
			name:    "docs: business hours block drift and consolidation, Empty always 100%",
			budgets: docsBusinessHours(), nodes: 10,
			want: map[Reason]string{
				Underutilized: "Mon 00:00-Mon 09:00 U []\nMon 09:00-Mon 17:00 0 [0]\nMon 17:00-Tue 09:00 U []\nTue 09:00-Tue 17:00 0 [0]\nTue 17:00-Wed 09:00 U []\nWed 09:00-Wed 17:00 0 [0]\nWed 17:00-Thu 09:00 U []\nThu 09:00-Thu 17:00 0 [0]\nThu 17:00-Fri 09:00 U []\nFri 09:00-Fri 17:00 0 [0]\nFri 17:00-Mon 00:00 U []\n",
				Empty:         "Mon 00:00-Mon 00:00 10 [1]\n",
			},
		},
		{
			name:    "docs: drift held 17:00 to 09:00 on weeknights, unlimited the rest (weekends too)",
			budgets: []Budget{scheduled(0, "0", "0 17 * * mon-fri", "16h", "Drifted")}, nodes: 10,
			want: map[Reason]string{
				Drifted: "Mon 00:00-Mon 17:00 U []\nMon 17:00-Tue 09:00 0 [0]\nTue 09:00-Tue 17:00 U []\nTue 17:00-Wed 09:00 0 [0]\nWed 09:00-Wed 17:00 U []\nWed 17:00-Thu 09:00 0 [0]\nThu 09:00-Thu 17:00 U []\nThu 17:00-Fri 09:00 0 [0]\nFri 09:00-Fri 17:00 U []\nFri 17:00-Sat 09:00 0 [0]\nSat 09:00-Mon 00:00 U []\n",
				Empty:   "Mon 00:00-Mon 00:00 U []\n",
			},
		},
		{
			name:    "docs: sat-sun blocks every reason all week",
			budgets: []Budget{scheduled(0, "0", "0 9 * * sat-sun", "24h")}, nodes: 10,
			want: map[Reason]string{Underutilized: "Mon 00:00-Mon 00:00 B [0]\n", Drifted: "Mon 00:00-Mon 00:00 B [0]\n"},
		},
		{
			name: "overlapping windows and a default, 21 nodes with 1 disrupting",
			budgets: []Budget{
				{Index: 0, Nodes: "10%"},
				scheduled(1, "1", "0 22 * * sat", "4h"),
				scheduled(2, "0", "0 23 * * sat", "2h", "Drifted"),
			},
			nodes: 21, disrupting: 1,
			want: map[Reason]string{
				Underutilized: "Mon 00:00-Sat 22:00 2 [0]\nSat 22:00-Sun 02:00 0 [1]\nSun 02:00-Mon 00:00 2 [0]\n",
				Drifted:       "Mon 00:00-Sat 22:00 2 [0]\nSat 22:00-Sat 23:00 0 [1]\nSat 23:00-Sun 01:00 0 [2]\nSun 01:00-Sun 02:00 0 [1]\nSun 02:00-Mon 00:00 2 [0]\n",
			},
		},
		{
			name:    "daily for 36h never closes",
			budgets: []Budget{scheduled(0, "3", "0 0 * * *", "36h")}, nodes: 10,
			want: map[Reason]string{Empty: "Mon 00:00-Mon 00:00 3 [0]\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := week(t)
			tl, err := Timeline(tt.budgets, Disrupted(tt.nodes, tt.disrupting), from, to)
			if err != nil {
				t.Fatal(err)
			}
			for r, want := range tt.want {
				if got := describeStretches(tl[r]); got != want {
					t.Errorf("%s:\n%s\nwant\n%s", r, got, want)
				}
			}
		})
	}
}

func TestTimelineRefusesBadRanges(t *testing.T) {
	from := instant(t, "2025-01-06T00:00:00Z")
	for _, to := range []time.Time{from, from.Add(-time.Hour), from.Add(MaxTimelineSpan + time.Hour)} {
		if _, err := Timeline(DefaultBudgets(), Disrupted(1, 0), from, to); err == nil {
			t.Errorf("Timeline(%s, %s) gave no error", from, to)
		}
	}
}

// TestTimelineAgreesWithAllowed is the proof that both answers come from one
// rule: at every stretch edge, just before it and at random instants, the
// timeline says what Allowed says.
func TestTimelineAgreesWithAllowed(t *testing.T) {
	sets := [][]Budget{
		docsBusinessHours(),
		{{Index: 0, Nodes: "10%"}, scheduled(1, "1", "*/20 * * * *", "7m"), scheduled(2, "0", "0 22 * * *", "5h", "Drifted"), scheduled(3, "2", "0 0 * * 1,3", "36h", "Empty", "Drifted")},
		{scheduled(0, "ten", "0 12 * * *", "1h"), {Index: 1, Nodes: "3", Reasons: []string{}}},
		{scheduled(0, "0", "0 0 30 2 *", "1h", "Underutilized"), scheduled(1, "50%", "@hourly", "20m")},
	}
	from := instant(t, "2025-02-24T05:43:00Z")
	to := from.Add(7 * 24 * time.Hour)
	rng := rand.New(rand.NewPCG(3, 4))
	for i, budgets := range sets {
		set := CompileSet(budgets)
		tl, err := set.Timeline(Disrupted(13, 1), from, to)
		if err != nil {
			t.Fatal(err)
		}
		var probes []time.Time
		for _, ss := range tl {
			for _, s := range ss {
				probes = append(probes, s.From, s.From.Add(-time.Second), s.To.Add(-time.Second))
			}
		}
		for range 300 {
			probes = append(probes, from.Add(time.Duration(rng.Int64N(int64(to.Sub(from))))))
		}
		for _, p := range probes {
			if p.Before(from) || !p.Before(to) {
				continue
			}
			now, err := set.Allowed(Disrupted(13, 1), p)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range Reasons {
				got, ok := tl.At(r, p)
				if !ok || !got.Same(now[r]) {
					t.Fatalf("set %d, %s at %s: timeline %+v (found %v), Allowed %+v", i, r, p, got, ok, now[r])
				}
			}
		}
	}
}

func TestNextChange(t *testing.T) {
	budgets := docsBusinessHours()
	tests := []struct {
		now  string
		want map[Reason]string // "at allowance", or "" for no change within the horizon
	}{
		{"2025-01-06T10:00:00Z", map[Reason]string{Underutilized: "2025-01-06T17:00:00Z U", Drifted: "2025-01-06T17:00:00Z U", Empty: ""}},
		{"2025-01-06T17:00:00Z", map[Reason]string{Underutilized: "2025-01-07T09:00:00Z 0", Drifted: "2025-01-07T09:00:00Z 0", Empty: ""}},
		{"2025-01-10T18:30:00Z", map[Reason]string{Underutilized: "2025-01-13T09:00:00Z 0", Drifted: "2025-01-13T09:00:00Z 0", Empty: ""}},
	}
	for _, tt := range tests {
		got, err := NextChange(budgets, Disrupted(10, 0), instant(t, tt.now), DefaultHorizon)
		if err != nil {
			t.Fatal(err)
		}
		for r, want := range tt.want {
			c := got[r]
			s := ""
			if !c.At.IsZero() {
				s = c.At.Format(time.RFC3339) + " " + compact(c.To)
			}
			if s != want {
				t.Errorf("at %s, %s next change = %q, want %q", tt.now, r, s, want)
			}
		}
	}
	short, err := NextChange(budgets, Disrupted(10, 0), instant(t, "2025-01-06T10:00:00Z"), time.Hour)
	if err != nil || !short[Drifted].At.IsZero() {
		t.Errorf("a one-hour horizon should see no change: %+v, %v", short[Drifted], err)
	}
}

// TestLookAheadAgreesWithTheWholeHorizon checks NextChange and NextAllowed,
// which look an hour, then a day, then the whole horizon ahead, against the
// whole horizon's timeline read directly: changes within the hour, at its
// end, within the day, at its end, later in the week and never.
func TestLookAheadAgreesWithTheWholeHorizon(t *testing.T) {
	sets := [][]Budget{
		docsBusinessHours(),
		{{Index: 0, Nodes: "34%"}, {Index: 1, Nodes: "1", Reasons: []string{"Drifted"}}, scheduled(2, "0", "*/2 * * * *", "1m", "Empty")},
		{scheduled(0, "0", "0 * * * *", "30m", "Drifted"), scheduled(1, "0", "0 0 * * *", "1h", "Empty")},
		{scheduled(0, "0", "0 0 * * sat", "48h")},
		{scheduled(0, "0", "0 0 1 1 *", "1h")},
		{{Index: 0, Nodes: "0"}},
	}
	nows := []string{"2025-01-06T10:00:00Z", "2025-01-06T23:00:00Z", "2025-01-06T23:30:00Z", "2025-01-07T00:00:00Z", "2025-01-09T23:59:59Z", "2025-01-10T18:30:15Z"}
	for i, budgets := range sets {
		set := CompileSet(budgets)
		for _, now := range nows {
			at := instant(t, now)
			for _, counts := range []Counts{Disrupted(10, 0), Disrupted(3, 3)} {
				tl, err := set.Timeline(counts, at, at.Add(DefaultHorizon))
				if err != nil {
					t.Fatal(err)
				}
				changes, err := set.NextChange(counts, at, DefaultHorizon)
				if err != nil {
					t.Fatal(err)
				}
				allowed, err := set.NextAllowed(counts, at, DefaultHorizon)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range Reasons {
					want, wantAllowed := Change{}, time.Time{}
					if ss := tl[r]; len(ss) > 1 {
						want = Change{At: ss[1].From, To: ss[1].Allowance}
					}
					for _, st := range tl[r] {
						if !st.Blocked && (st.Unlimited || st.Count > 0) {
							wantAllowed = st.From
							break
						}
					}
					if got := changes[r]; !got.At.Equal(want.At) || !got.To.Same(want.To) {
						t.Errorf("set %d at %s with %+v, %s: next change %+v, whole horizon says %+v", i, now, counts, r, got, want)
					}
					if got := allowed[r]; !got.Equal(wantAllowed) {
						t.Errorf("set %d at %s with %+v, %s: next allowed %s, whole horizon says %s", i, now, counts, r, got, wantAllowed)
					}
				}
			}
		}
	}
}
