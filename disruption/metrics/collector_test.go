package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/drift"
	"github.com/karpgate/karpgate/disruption/status"
)

var t0 = time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)

func business() status.NodePool {
	closes := t0.Add(30 * time.Minute)
	since := t0.Add(-2 * time.Hour)
	// Karpenter v1.15: one node being replaced and one only NotReady,
	// which does not use up Unhealthy's budget.
	return status.NodePool{
		Name: "business", At: t0, Nodes: 5, Disrupting: 2, NotReady: 1, DoNotDisrupt: 1, DriftBlockedByPods: 2,
		Reasons: budget.Reasons,
		Allowed: map[budget.Reason]budget.Allowance{
			budget.Underutilized: {Unlimited: true},
			budget.Empty:         {Count: 1, Limit: 3},
			budget.Drifted:       {Count: 0, Limit: 2},
			budget.Unhealthy:     {Count: 1, Limit: 2},
		},
		Repair:     &status.Repair{Nodes: 6, Unhealthy: 1, StopAbove: 2},
		NextChange: map[budget.Reason]status.Change{budget.Drifted: {At: &closes, To: &budget.Allowance{}}},
		Drift:      drift.Summary{Total: 3, ByReason: map[string]int{"AMIDrift": 2, "NodePoolDrifted": 1}, OldestSince: &since},
		WillDrift:  drift.AMIOutlook{Pending: []drift.Pending{{NodeClaim: "a"}, {NodeClaim: "b"}}},
	}
}

// broken is judged by Karpenter v1.14: three reasons, no node repair.
func broken() status.NodePool {
	v114, _ := budget.ReasonsOf("v1.14")
	p := status.NodePool{Name: "broken", At: t0, Nodes: 2, Invalid: []string{"bad cron"}, Reasons: v114,
		Allowed: map[budget.Reason]budget.Allowance{}, NextChange: map[budget.Reason]status.Change{}}
	for _, r := range v114 {
		p.Allowed[r] = budget.Allowance{Blocked: true}
	}
	p.Guard.Held = true
	return p
}

func TestCollectorExportsEachNodePoolAtScrapeTime(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := NewCollector(clk)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	c.Set(business())
	c.Set(broken())
	clk.Step(10 * time.Minute) // time-dependent values follow the clock, not the reconcile

	want := `
# HELP karpgate_nodepool_allowed_disruptions Voluntary disruptions a reason allows now: the binding budget minus the nodes using it up; +Inf when no active budget covers the reason, 0 when invalid budgets block every reason. One series per reason of the Karpenter release judged (Unhealthy, node repair, from v1.15).
# TYPE karpgate_nodepool_allowed_disruptions gauge
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Drifted"} 0
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Empty"} 0
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Underutilized"} 0
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Drifted"} 0
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Empty"} 1
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Unhealthy"} 1
# HELP karpgate_nodepool_allowed_disruptions_next_change_seconds Seconds until the reason's allowance next changes as budget windows open or close; +Inf when it does not change within 7 days.
# TYPE karpgate_nodepool_allowed_disruptions_next_change_seconds gauge
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="broken",reason="Drifted"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="broken",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="broken",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="business",reason="Drifted"} 1200
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="business",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="business",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="business",reason="Unhealthy"} +Inf
# HELP karpgate_nodepool_budget_consuming_nodes Counted nodes using up a reason's budget: deleting, marked for disruption, rebooting, or not Ready (except for Unhealthy: Karpenter v1.15 does not count nodes that are only not Ready against node repair).
# TYPE karpgate_nodepool_budget_consuming_nodes gauge
karpgate_nodepool_budget_consuming_nodes{nodepool="broken",reason="Drifted"} 0
karpgate_nodepool_budget_consuming_nodes{nodepool="broken",reason="Empty"} 0
karpgate_nodepool_budget_consuming_nodes{nodepool="broken",reason="Underutilized"} 0
karpgate_nodepool_budget_consuming_nodes{nodepool="business",reason="Drifted"} 2
karpgate_nodepool_budget_consuming_nodes{nodepool="business",reason="Empty"} 2
karpgate_nodepool_budget_consuming_nodes{nodepool="business",reason="Underutilized"} 2
karpgate_nodepool_budget_consuming_nodes{nodepool="business",reason="Unhealthy"} 1
# HELP karpgate_nodepool_budget_nodes Nodes the binding budget lets a reason disrupt at once, before the nodes using it up are subtracted (what Karpenter v1.15 exports as karpenter_nodepools_allowed_disruptions); +Inf when no active budget covers the reason, 0 when invalid budgets block every reason.
# TYPE karpgate_nodepool_budget_nodes gauge
karpgate_nodepool_budget_nodes{nodepool="broken",reason="Drifted"} 0
karpgate_nodepool_budget_nodes{nodepool="broken",reason="Empty"} 0
karpgate_nodepool_budget_nodes{nodepool="broken",reason="Underutilized"} 0
karpgate_nodepool_budget_nodes{nodepool="business",reason="Drifted"} 2
karpgate_nodepool_budget_nodes{nodepool="business",reason="Empty"} 3
karpgate_nodepool_budget_nodes{nodepool="business",reason="Underutilized"} +Inf
karpgate_nodepool_budget_nodes{nodepool="business",reason="Unhealthy"} 2
# HELP karpgate_nodepool_disrupting_nodes Counted nodes already disrupting (NotReady, deleting, rebooting or tainted karpenter.sh/disrupted); they reduce the allowance of every reason but Unhealthy, which only the ones not merely NotReady reduce.
# TYPE karpgate_nodepool_disrupting_nodes gauge
karpgate_nodepool_disrupting_nodes{nodepool="broken"} 0
karpgate_nodepool_disrupting_nodes{nodepool="business"} 2
# HELP karpgate_nodepool_do_not_disrupt_nodes Counted nodes annotated karpenter.sh/do-not-disrupt=true.
# TYPE karpgate_nodepool_do_not_disrupt_nodes gauge
karpgate_nodepool_do_not_disrupt_nodes{nodepool="broken"} 0
karpgate_nodepool_do_not_disrupt_nodes{nodepool="business"} 1
# HELP karpgate_nodepool_drift_blocked_by_pods_nodes Drifted nodes whose pods block eviction (a karpenter.sh/do-not-disrupt pod, or a PodDisruptionBudget that allows no disruption) and whose NodeClaim has no terminationGracePeriod: the rollout cannot replace them.
# TYPE karpgate_nodepool_drift_blocked_by_pods_nodes gauge
karpgate_nodepool_drift_blocked_by_pods_nodes{nodepool="broken"} 0
karpgate_nodepool_drift_blocked_by_pods_nodes{nodepool="business"} 2
# HELP karpgate_nodepool_drifted_nodeclaims NodeClaims whose Drifted condition is True, by the condition's reason.
# TYPE karpgate_nodepool_drifted_nodeclaims gauge
karpgate_nodepool_drifted_nodeclaims{nodepool="business",reason="AMIDrift"} 2
karpgate_nodepool_drifted_nodeclaims{nodepool="business",reason="NodePoolDrifted"} 1
# HELP karpgate_nodepool_invalid_budgets Budgets that make Karpenter allow zero voluntary disruptions of the NodePool for every reason.
# TYPE karpgate_nodepool_invalid_budgets gauge
karpgate_nodepool_invalid_budgets{nodepool="broken"} 1
karpgate_nodepool_invalid_budgets{nodepool="business"} 0
# HELP karpgate_nodepool_nodes Nodes the NodePool's budgets are computed from: initialized, with a NodeClaim whose instance is not terminating.
# TYPE karpgate_nodepool_nodes gauge
karpgate_nodepool_nodes{nodepool="broken"} 2
karpgate_nodepool_nodes{nodepool="business"} 5
# HELP karpgate_nodepool_oldest_drift_age_seconds Seconds since the longest-drifted NodeClaim became Drifted; absent when none is drifted.
# TYPE karpgate_nodepool_oldest_drift_age_seconds gauge
karpgate_nodepool_oldest_drift_age_seconds{nodepool="business"} 7800
# HELP karpgate_nodepool_repair_stopped 1 while more than 20% (rounded up) of the NodePool's nodes are unhealthy, so Karpenter v1.15 repairs none of them. Absent for a release without node repair.
# TYPE karpgate_nodepool_repair_stopped gauge
karpgate_nodepool_repair_stopped{nodepool="business"} 0
# HELP karpgate_nodepool_drift_frozen 1 while a freeze (karpgate freeze, or the rollout guard's cluster-wide trip) holds the NodePool's drift disruptions at zero.
# TYPE karpgate_nodepool_drift_frozen gauge
karpgate_nodepool_drift_frozen{nodepool="broken"} 0
karpgate_nodepool_drift_frozen{nodepool="business"} 0
# HELP karpgate_nodepool_rollout_guard_held 1 while karpgate's rollout guard holds the NodePool's drift rollout.
# TYPE karpgate_nodepool_rollout_guard_held gauge
karpgate_nodepool_rollout_guard_held{nodepool="broken"} 1
karpgate_nodepool_rollout_guard_held{nodepool="business"} 0
# HELP karpgate_nodepool_unhealthy_nodes Nodes of the NodePool, initialized or not, whose Ready condition is False or Unknown: what node repair (Karpenter v1.15) acts on. Absent for a release without node repair.
# TYPE karpgate_nodepool_unhealthy_nodes gauge
karpgate_nodepool_unhealthy_nodes{nodepool="business"} 1
# HELP karpgate_nodepool_will_drift_nodeclaims NodeClaims whose image is no longer the newest compatible AMI of their EC2NodeClass, not yet marked Drifted.
# TYPE karpgate_nodepool_will_drift_nodeclaims gauge
karpgate_nodepool_will_drift_nodeclaims{nodepool="broken"} 0
karpgate_nodepool_will_drift_nodeclaims{nodepool="business"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	c.Delete("business")
	if n := testutil.CollectAndCount(c, "karpgate_nodepool_allowed_disruptions"); n != 3 {
		t.Errorf("after Delete, %d allowed series remain, want broken's 3", n)
	}
}
