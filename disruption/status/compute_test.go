package status

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/internal/karpenter"
)

func TestComputeCountsNodesAsKarpenterDoes(t *testing.T) {
	members := []member{
		newMember("p", 0),
		newMember("p", 1, notReady),
		newMember("p", 2, tainted),
		newMember("p", 3, deleting),
		newMember("p", 4, uninitialized),
		newMember("p", 5, terminating),
		newMember("p", 6, unmanaged),
		newMember("p", 7, doNotDisrupt, driftedSince("AMIDrift", monday0830.Add(-time.Hour))),
		newMember("p", 8, doNotDisrupt),
		newMember("p", 9, rebooting),
	}
	got := Compute(poolOf(pool(t, "p", `[{"nodes":"100%"}]`), members...), nil, monday0830)
	if got.Nodes != 7 || got.Disrupting != 4 || got.NotReady != 1 || got.DoNotDisrupt != 2 || got.DoNotDisruptDrifted != 1 {
		t.Errorf("nodes %d, disrupting %d (not ready %d), do-not-disrupt %d (drifted %d); want 7, 4 (1), 2 (1)",
			got.Nodes, got.Disrupting, got.NotReady, got.DoNotDisrupt, got.DoNotDisruptDrifted)
	}
	if a := got.Allowed[budget.Drifted]; a.Limit != 7 || a.Count != 3 {
		t.Errorf("100%% of 7 with 4 disrupting = %+v, want limit 7 count 3", a)
	}
	// The rebooting node counts against Unhealthy's budget; the node that
	// is only NotReady does not.
	if a := got.Allowed[budget.Unhealthy]; a.Limit != 7 || a.Count != 4 {
		t.Errorf("Unhealthy: 100%% of 7 with 3 disrupting = %+v, want limit 7 count 4", a)
	}
	if v114 := Compute(poolOf(pool(t, "p", `[{"nodes":"100%"}]`), members...), budget.Reasons[:3], monday0830); len(v114.Allowed) != 3 || len(v114.Reasons) != 3 {
		t.Errorf("with v1.14's reasons: reasons %v, allowed %v", v114.Reasons, v114.Allowed)
	}
}

func TestComputeAppliesBudgetSemanticsAtTheInjectedTime(t *testing.T) {
	unlimited := budget.Allowance{Unlimited: true}
	count := func(n, limit int, binding ...int) budget.Allowance {
		return budget.Allowance{Count: n, Limit: limit, Binding: binding}
	}
	tests := []struct {
		name       string
		budgets    string
		nodes      []member
		at         time.Time
		want       map[budget.Reason]budget.Allowance
		wantChange map[budget.Reason]time.Time // absent: no change within 7 days
		invalid    bool
	}{
		{"absent budgets get the 10% default, rounded up", "", healthy("p", 5), monday0830,
			map[budget.Reason]budget.Allowance{budget.Underutilized: count(1, 1, 0), budget.Empty: count(1, 1, 0), budget.Drifted: count(1, 1, 0), budget.Unhealthy: count(1, 1, 0)}, nil, false},
		{"percentages round up", `[{"nodes":"25%"}]`, healthy("p", 10), monday0830,
			map[budget.Reason]budget.Allowance{budget.Underutilized: count(3, 3, 0), budget.Empty: count(3, 3, 0), budget.Drifted: count(3, 3, 0), budget.Unhealthy: count(3, 3, 0)}, nil, false},
		{"budgets: [] leaves every reason unlimited", `[]`, healthy("p", 3), monday0830,
			map[budget.Reason]budget.Allowance{budget.Underutilized: unlimited, budget.Empty: unlimited, budget.Drifted: unlimited, budget.Unhealthy: unlimited}, nil, false},
		{"reasons: [] restricts nothing", `[{"nodes":"0","reasons":[]}]`, healthy("p", 3), monday0830,
			map[budget.Reason]budget.Allowance{budget.Underutilized: unlimited, budget.Empty: unlimited, budget.Drifted: unlimited, budget.Unhealthy: unlimited}, nil, false},
		{"a reason no budget names is unlimited", `[{"nodes":"1","reasons":["Drifted"]}]`, healthy("p", 3), monday0830,
			map[budget.Reason]budget.Allowance{budget.Underutilized: unlimited, budget.Empty: unlimited, budget.Drifted: count(1, 1, 0), budget.Unhealthy: unlimited}, nil, false},
		{"disrupting nodes are subtracted, floor 0", `[{"nodes":"50%"},{"nodes":"1","reasons":["Empty"]}]`,
			[]member{newMember("p", 0), newMember("p", 1, notReady), newMember("p", 2, tainted), newMember("p", 3)}, monday0830,
			map[budget.Reason]budget.Allowance{budget.Underutilized: count(0, 2, 0), budget.Empty: count(0, 1, 1), budget.Drifted: count(0, 2, 0), budget.Unhealthy: count(1, 2, 0)}, nil, false},
		{"an invalid cron blocks every reason", `[{"nodes":"10%"},{"nodes":"5","schedule":"0 9 * * sat-sun","duration":"1h","reasons":["Drifted"]}]`, healthy("p", 3), monday0830,
			nil, nil, true},
		{"a window across midnight is active after midnight", `[{"nodes":"0","schedule":"0 22 * * *","duration":"4h","reasons":["Drifted"]}]`,
			healthy("p", 3), time.Date(2026, 1, 6, 1, 0, 0, 0, time.UTC),
			map[budget.Reason]budget.Allowance{budget.Underutilized: unlimited, budget.Empty: unlimited, budget.Drifted: count(0, 0, 0), budget.Unhealthy: unlimited},
			map[budget.Reason]time.Time{budget.Drifted: time.Date(2026, 1, 6, 2, 0, 0, 0, time.UTC)}, false},
		{"and closed before it opens", `[{"nodes":"0","schedule":"0 22 * * *","duration":"4h","reasons":["Drifted"]}]`,
			healthy("p", 3), time.Date(2026, 1, 5, 21, 0, 0, 0, time.UTC),
			map[budget.Reason]budget.Allowance{budget.Underutilized: unlimited, budget.Empty: unlimited, budget.Drifted: unlimited, budget.Unhealthy: unlimited},
			map[budget.Reason]time.Time{budget.Drifted: time.Date(2026, 1, 5, 22, 0, 0, 0, time.UTC)}, false},
		{"overlapping windows: the smallest active limit binds", `[{"nodes":"2","schedule":"0 8 * * *","duration":"4h"},{"nodes":"1","schedule":"0 8 * * mon","duration":"1h"},{"nodes":"3"}]`,
			healthy("p", 10), monday0830,
			map[budget.Reason]budget.Allowance{budget.Underutilized: count(1, 1, 1), budget.Empty: count(1, 1, 1), budget.Drifted: count(1, 1, 1), budget.Unhealthy: count(1, 1, 1)},
			map[budget.Reason]time.Time{budget.Underutilized: monday0830.Add(30 * time.Minute), budget.Empty: monday0830.Add(30 * time.Minute), budget.Drifted: monday0830.Add(30 * time.Minute), budget.Unhealthy: monday0830.Add(30 * time.Minute)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(poolOf(pool(t, "p", tt.budgets), tt.nodes...), nil, tt.at)
			if got.Blocked() != tt.invalid {
				t.Fatalf("blocked = %v (%v), want %v", got.Blocked(), got.Invalid, tt.invalid)
			}
			if tt.invalid {
				for _, r := range budget.Reasons {
					if a := got.Allowed[r]; !a.Blocked || !strings.Contains(a.Cause, "sat-sun") {
						t.Errorf("%s = %+v, want blocked by the cron", r, a)
					}
				}
				if !strings.Contains(got.Invalid[0], `use "0 9 * * sat,sun"`) {
					t.Errorf("invalid = %v, want the fix named", got.Invalid)
				}
				return
			}
			if !reflect.DeepEqual(got.Allowed, tt.want) {
				t.Errorf("allowed = %+v\nwant      %+v", got.Allowed, tt.want)
			}
			for _, r := range budget.Reasons {
				c := got.NextChange[r]
				want, ok := tt.wantChange[r]
				switch {
				case !ok && c.At != nil:
					t.Errorf("%s changes at %s, want no change within 7 days", r, c.At)
				case ok && (c.At == nil || !c.At.Equal(want)):
					t.Errorf("%s changes at %v, want %s", r, c.At, want)
				}
			}
		})
	}
}

func TestComputeReportsDriftAndWhatWillDrift(t *testing.T) {
	since := monday0830.Add(-2 * time.Hour)
	got := Compute(poolOf(pool(t, "p", `[{"nodes":"10%"}]`),
		newMember("p", 0, oldImage, driftedSince("AMIDrift", since)),
		newMember("p", 1, oldImage),
		newMember("p", 2),
	), nil, monday0830)
	if got.Drift.Total != 1 || got.Drift.ByReason["AMIDrift"] != 1 || !got.Drift.OldestSince.Equal(since) {
		t.Errorf("drift = %+v", got.Drift)
	}
	if len(got.WillDrift.Pending) != 1 || got.WillDrift.Pending[0].NodeClaim != "p-1" || got.WillDrift.Pending[0].Newest != "ami-new" {
		t.Errorf("will drift = %+v, want p-1 to ami-new", got.WillDrift)
	}
}

func TestComputeReadsTheGuardsRecord(t *testing.T) {
	record := func(index int) string {
		b, _ := json.Marshal(holdrecord.Marker{Budget: holdrecord.Budget(), Index: index, Since: monday0830, Reason: "stuck"})
		return string(b)
	}
	tests := []struct {
		name        string
		budgets     string
		annotations map[string]string
		wantHeld    bool
		wantProblem bool
	}{
		{"held", `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`, map[string]string{karpenter.RolloutGuardAnnotation: record(1)}, true, false},
		{"its budget is gone", `[{"nodes":"10%"}]`, map[string]string{karpenter.RolloutGuardAnnotation: record(1)}, false, true},
		{"unreadable record", `[{"nodes":"10%"}]`, map[string]string{karpenter.RolloutGuardAnnotation: "yes"}, false, true},
		{"not held", `[{"nodes":"10%"}]`, nil, false, false},
		{"a record naming another budget", `[{"nodes":"10%"},{"nodes":"0"}]`, map[string]string{karpenter.RolloutGuardAnnotation: `{"budget":{"nodes":"0"},"index":1,"since":"2026-01-05T08:30:00Z","reason":"forged"}`}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			np := pool(t, "p", tt.budgets)
			np.Annotations = tt.annotations
			got := Compute(poolOf(np, healthy("p", 2)...), nil, monday0830)
			if got.Guard.Held != tt.wantHeld || (got.Guard.Problem != "") != tt.wantProblem {
				t.Errorf("guard = %+v", got.Guard)
			}
			if tt.wantHeld && (!got.Budgets[1].Guard || got.Budgets[0].Guard || got.Allowed[budget.Drifted].Count != 0) {
				t.Errorf("budgets = %+v, drifted %+v", got.Budgets, got.Allowed[budget.Drifted])
			}
		})
	}
}

// Node repair's circuit breaker counts every node of the NodePool, booting
// ones included, and stops repair while more than 20% (rounded up) are not
// Ready; a release without Unhealthy has no repair to report.
func TestComputeRepairStopsWhenMoreThanAFifthAreUnhealthy(t *testing.T) {
	pool10 := func(unhealthy ...memberOpt) []member {
		ms := healthy("p", 10)
		for i, o := range unhealthy {
			o(&ms[i])
		}
		return ms
	}
	unknown := func(m *member) { m.node.Status.Conditions[0].Status = "Unknown" }
	booting := func(m *member) { uninitialized(m); notReady(m) }
	tests := []struct {
		name    string
		members []member
		want    Repair
	}{
		{"all healthy", pool10(), Repair{Nodes: 10, StopAbove: 2}},
		{"two of ten", pool10(notReady, unknown), Repair{Nodes: 10, Unhealthy: 2, StopAbove: 2}},
		{"three of ten, one of them booting", pool10(notReady, unknown, booting), Repair{Nodes: 10, Unhealthy: 3, StopAbove: 2, Stopped: true}},
		{"one of two rounds up", []member{newMember("p", 0, notReady), newMember("p", 1)}, Repair{Nodes: 2, Unhealthy: 1, StopAbove: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(poolOf(pool(t, "p", `[{"nodes":"10%"}]`), tt.members...), nil, monday0830)
			if got.Repair == nil || *got.Repair != tt.want {
				t.Errorf("repair = %+v, want %+v", got.Repair, tt.want)
			}
			if v114 := Compute(poolOf(pool(t, "p", `[{"nodes":"10%"}]`), tt.members...), budget.Reasons[:3], monday0830); v114.Repair != nil {
				t.Errorf("v1.14 reports repair %+v", v114.Repair)
			}
		})
	}
}
