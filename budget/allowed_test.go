package budget

import (
	"reflect"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// allowances is a compact expectation: one entry per reason, in Reasons
// order; "U" unlimited, "B" blocked, otherwise the count.
type allowances [4]string

func (a allowances) check(t *testing.T, got map[Reason]Allowance) {
	t.Helper()
	for i, r := range Reasons {
		if s := compact(got[r]); s != a[i] {
			t.Errorf("%s = %s (%+v), want %s", r, s, got[r], a[i])
		}
	}
}

func compact(a Allowance) string {
	switch {
	case a.Blocked:
		return "B"
	case a.Unlimited:
		return "U"
	default:
		return a.String()
	}
}

// docsBusinessHours is Karpenter's docs example: no drift or consolidation in
// business hours, empty nodes always.
func docsBusinessHours() []Budget {
	return []Budget{
		scheduled(0, "0", "0 9 * * mon-fri", "8h", "Drifted", "Underutilized"),
		{Index: 1, Nodes: "100%", Reasons: []string{"Empty"}},
	}
}

func TestAllowed(t *testing.T) {
	const monday10 = "2025-01-06T10:00:00Z"
	tests := []struct {
		name              string
		budgets           []Budget
		nodes, disrupting int
		now               string
		want              allowances // Underutilized, Empty, Drifted, Unhealthy
	}{
		{"default 10% of 0 nodes", DefaultBudgets(), 0, 0, monday10, allowances{"0", "0", "0", "0"}},
		{"default 10% of 1 node rounds up", DefaultBudgets(), 1, 0, monday10, allowances{"1", "1", "1", "1"}},
		{"default 10% of 19 nodes", DefaultBudgets(), 19, 0, monday10, allowances{"2", "2", "2", "2"}},
		{"default 10% of 21 nodes", DefaultBudgets(), 21, 0, monday10, allowances{"3", "3", "3", "3"}},
		{"disrupting nodes are subtracted", DefaultBudgets(), 21, 2, monday10, allowances{"1", "1", "1", "1"}},
		{"floor zero", DefaultBudgets(), 21, 5, monday10, allowances{"0", "0", "0", "0"}},
		{"budgets: [] is unlimited", []Budget{}, 21, 5, monday10, allowances{"U", "U", "U", "U"}},
		{"reasons: [] restricts nothing", []Budget{{Nodes: "0", Reasons: []string{}}}, 10, 0, monday10, allowances{"U", "U", "U", "U"}},
		{"a reason in the wrong case restricts nothing", []Budget{{Nodes: "0", Reasons: []string{"drifted"}}}, 10, 0, monday10, allowances{"U", "U", "U", "U"}},
		{"min over active budgets", []Budget{{Index: 0, Nodes: "50%"}, {Index: 1, Nodes: "3"}, {Index: 2, Nodes: "1", Reasons: []string{"Drifted"}}}, 10, 0, monday10, allowances{"3", "3", "1", "3"}},
		{"an inactive budget does not count", []Budget{{Index: 0, Nodes: "5"}, scheduled(1, "0", "0 22 * * *", "4h")}, 10, 0, monday10, allowances{"5", "5", "5", "5"}},
		{"overlapping windows take the smaller", []Budget{scheduled(0, "4", "0 8 * * *", "4h"), scheduled(1, "2", "0 9 * * *", "4h")}, 10, 0, monday10, allowances{"2", "2", "2", "2"}},
		{"overlap ended for one", []Budget{scheduled(0, "4", "0 8 * * *", "4h"), scheduled(1, "2", "0 9 * * *", "4h")}, 10, 0, "2025-01-06T12:30:00Z", allowances{"2", "2", "2", "2"}},
		{"overlap ended for the other", []Budget{scheduled(0, "4", "0 8 * * *", "4h"), scheduled(1, "2", "0 6 * * *", "4h")}, 10, 0, "2025-01-06T11:00:00Z", allowances{"4", "4", "4", "4"}},
		{"midnight wrap, after midnight", []Budget{scheduled(0, "0", "0 22 * * *", "4h")}, 10, 0, "2025-01-07T01:00:00Z", allowances{"0", "0", "0", "0"}},
		{"midnight wrap, after the window", []Budget{scheduled(0, "0", "0 22 * * *", "4h")}, 10, 0, "2025-01-07T02:00:00Z", allowances{"U", "U", "U", "U"}},
		{"window longer than the period", []Budget{scheduled(0, "1", "@hourly", "90m")}, 10, 0, "2025-01-06T10:45:00Z", allowances{"1", "1", "1", "1"}},
		{"invalid cron blocks every reason, not only its own", []Budget{{Index: 0, Nodes: "10"}, scheduled(1, "0", "0 9 * * sat-sun", "24h", "Drifted")}, 10, 0, monday10, allowances{"B", "B", "B", "B"}},
		{"invalid nodes block while active", []Budget{scheduled(0, "ten", "0 9 * * *", "1h")}, 10, 0, "2025-01-06T09:30:00Z", allowances{"B", "B", "B", "B"}},
		{"invalid nodes do not block while inactive", []Budget{scheduled(0, "ten", "0 9 * * *", "1h")}, 10, 0, monday10, allowances{"U", "U", "U", "U"}},
		{"a never-firing schedule is always active", []Budget{scheduled(0, "0", "0 0 30 2 *", "1h", "Drifted")}, 10, 0, monday10, allowances{"U", "U", "0", "U"}},
		{"docs: business hours, inside", docsBusinessHours(), 10, 0, monday10, allowances{"0", "10", "0", "U"}},
		{"docs: business hours, evening", docsBusinessHours(), 10, 0, "2025-01-06T17:00:00Z", allowances{"U", "10", "U", "U"}},
		{"docs: business hours, Saturday", docsBusinessHours(), 10, 3, "2025-01-11T10:00:00Z", allowances{"U", "7", "U", "U"}},
		{"docs: drift only off hours, inside the 16h", []Budget{scheduled(0, "0", "0 17 * * mon-fri", "16h", "Drifted")}, 10, 0, "2025-01-07T08:59:00Z", allowances{"U", "U", "0", "U"}},
		{"docs: drift only off hours, business hours are unlimited", []Budget{scheduled(0, "0", "0 17 * * mon-fri", "16h", "Drifted")}, 10, 0, "2025-01-07T09:00:00Z", allowances{"U", "U", "U", "U"}},
		{"docs: sat-sun fails and blocks everything", []Budget{scheduled(0, "0", "0 9 * * sat-sun", "24h")}, 10, 0, monday10, allowances{"B", "B", "B", "B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Allowed(tt.budgets, Disrupted(tt.nodes, tt.disrupting), instant(t, tt.now))
			if err != nil {
				t.Fatal(err)
			}
			tt.want.check(t, got)
		})
	}
}

func TestAllowedSaysWhichBudgetBinds(t *testing.T) {
	now := instant(t, "2025-01-06T10:00:00Z")
	budgets := []Budget{{Index: 0, Nodes: "20%"}, {Index: 1, Nodes: "2"}, {Index: 2, Nodes: "1", Reasons: []string{"Drifted"}}, scheduled(3, "1", "0 9 * * *", "2h", "Drifted")}
	got, err := Allowed(budgets, Disrupted(10, 0), now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Reason]Allowance{
		Underutilized: {Count: 2, Limit: 2, Binding: []int{0, 1}},
		Empty:         {Count: 2, Limit: 2, Binding: []int{0, 1}},
		Drifted:       {Count: 1, Limit: 1, Binding: []int{2, 3}},
		Unhealthy:     {Count: 2, Limit: 2, Binding: []int{0, 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Allowed() = %+v\nwant %+v", got, want)
	}
	blocked, _ := Allowed([]Budget{scheduled(0, "1", "0 9 * * 7", "1h")}, Disrupted(10, 0), now)
	a := blocked[Empty]
	if !a.Blocked || a.Count != 0 || !reflect.DeepEqual(a.Binding, []int{0}) || !strings.Contains(a.Cause, `end of range (7) above maximum (6): 7; use "0 9 * * 0"`) {
		t.Errorf("blocked allowance = %+v", a)
	}
}

func TestAllowedRefusesImpossibleCounts(t *testing.T) {
	now := instant(t, "2025-01-06T10:00:00Z")
	for _, c := range []Counts{{Nodes: -1}, {Nodes: 3, Disrupting: -1}, {Nodes: 3, Disrupting: 1, NotReady: -1}, {Nodes: 3, Disrupting: 1, NotReady: 2}} {
		if _, err := Allowed(DefaultBudgets(), c, now); err == nil {
			t.Errorf("Allowed(%+v) gave no error", c)
		}
	}
}

// Karpenter v1.15 counts a node that is only NotReady against every
// reason's budget but Unhealthy's: NotReady is what repair acts on.
// Deleting, marked and rebooting nodes count against all four.
func TestAllowedUnhealthySparesNotReadyNodes(t *testing.T) {
	now := instant(t, "2025-01-06T10:00:00Z")
	tests := []struct {
		name    string
		budgets []Budget
		counts  Counts
		want    allowances
	}{
		{"no node disrupting", DefaultBudgets(), Counts{Nodes: 30}, allowances{"3", "3", "3", "3"}},
		{"two NotReady nodes use up the others, not Unhealthy", DefaultBudgets(), Counts{Nodes: 30, Disrupting: 2, NotReady: 2}, allowances{"1", "1", "1", "3"}},
		{"a node being deleted uses up all four", DefaultBudgets(), Counts{Nodes: 30, Disrupting: 3, NotReady: 2}, allowances{"0", "0", "0", "2"}},
		{"an Unhealthy-only budget", []Budget{{Nodes: "1", Reasons: []string{"Unhealthy"}}}, Counts{Nodes: 30, Disrupting: 4, NotReady: 4}, allowances{"U", "U", "U", "1"}},
		{"Unhealthy frozen, the rest unlimited", []Budget{{Nodes: "0", Reasons: []string{"Unhealthy"}}}, Counts{Nodes: 30}, allowances{"U", "U", "U", "0"}},
		{"the v1.0 reasons leave Unhealthy unlimited", []Budget{{Nodes: "20%", Reasons: []string{"Underutilized", "Empty", "Drifted"}}}, Counts{Nodes: 30}, allowances{"6", "6", "6", "U"}},
		{"a count past int32 wraps as Karpenter's does", []Budget{{Nodes: "4294967297"}}, Counts{Nodes: 30}, allowances{"1", "1", "1", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Allowed(tt.budgets, tt.counts, now)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.check(t, got)
		})
	}
}

// A set compiled for Karpenter v1.0 to v1.14 answers for the three reasons
// those releases know, with the same numbers as for v1.15.
func TestCompileSetForOlderReleases(t *testing.T) {
	now := instant(t, "2025-01-06T10:00:00Z")
	budgets := []Budget{{Index: 0, Nodes: "20%"}, {Index: 1, Nodes: "1", Reasons: []string{"Drifted"}}}
	for _, tt := range []struct {
		version string
		want    []Reason
	}{
		{"v1.0.8", []Reason{Underutilized, Empty, Drifted}},
		{"v1.14", []Reason{Underutilized, Empty, Drifted}},
		{"1.15.0", []Reason{Underutilized, Empty, Drifted, Unhealthy}},
		{"v1.16", []Reason{Underutilized, Empty, Drifted, Unhealthy}},
	} {
		reasons, err := ReasonsOf(tt.version)
		if err != nil {
			t.Fatal(err)
		}
		set := CompileSetFor(reasons, budgets)
		got, err := set.Allowed(Disrupted(10, 0), now)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(set.Reasons(), tt.want) || len(got) != len(tt.want) {
			t.Errorf("%s: reasons %v, allowed %v; want %v", tt.version, set.Reasons(), got, tt.want)
		}
		if got[Drifted].Count != 1 || got[Empty].Count != 2 {
			t.Errorf("%s: allowed %v", tt.version, got)
		}
	}
	for _, bad := range []struct{ version, want string }{
		{"", "vMAJOR.MINOR"},
		{"1", "vMAJOR.MINOR"},
		{"v1.x", "vMAJOR.MINOR"},
		{"v1.-1", "vMAJOR.MINOR"},
		{"v0.37", "predates every Karpenter release"},
	} {
		if _, err := ReasonsOf(bad.version); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ReasonsOf(%q) = %v; want an error with %q", bad.version, err, bad.want)
		}
	}
}

// TestReasonsAreTheNewestRelease: Reasons, which the metrics and views use
// when no release is named, are the newest release's CRD enum.
func TestReasonsAreTheNewestRelease(t *testing.T) {
	newest := release.Newest()
	if got := ReasonsNamed(newest.Facts.Schema.BudgetReasons); !reflect.DeepEqual(got, Reasons) || len(newest.Facts.Schema.BudgetReasons) != len(Reasons) {
		t.Errorf("Karpenter %s's budget reasons are %v; budget.Reasons is %v", newest.Version, newest.Facts.Schema.BudgetReasons, Reasons)
	}
}
