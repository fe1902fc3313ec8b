package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/eviction"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// explainReason applies one reason's own rules (Karpenter's ShouldDisrupt
// of Drift, StaticDrift, Emptiness, consolidation and Repair), the pods'
// eviction blockers and the budgets.
func explainReason(r budget.Reason, in Input, e *Explanation, st *status.NodePool, now time.Time) Reason {
	out := Reason{Reason: r, Stops: []Stop{}}
	add := func(kind StopKind, until *time.Time, format string, args ...any) {
		out.Stops = append(out.Stops, Stop{Kind: kind, Message: fmt.Sprintf(format, args...), Until: until})
	}
	nc, np := in.NodeClaim, in.Pool.NodePool
	if nc != nil && np != nil {
		switch r {
		case budget.Drifted:
			driftStops(&out, e, add)
			staticStops(r, in, &out, add)
		case budget.Empty, budget.Underutilized:
			if np.Spec.Replicas != nil {
				add(StopStaticNodePool, nil, "NodePool %s is static (spec.replicas: %d): Karpenter never consolidates its nodes", np.Name, *np.Spec.Replicas)
				break
			}
			consolidationStops(r, in, add)
		case budget.Unhealthy:
			repairStops(in, st, &out, add)
			staticStops(r, in, &out, add)
		}
		podStops(r, &out, nc, e, add)
	}
	if st != nil {
		out.Budget = budgetOf(r, in, *st, now)
		switch a := out.Budget.Allowed; {
		case a.Blocked:
			add(StopBudgetsInvalid, nil, "invalid budgets make Karpenter allow zero voluntary disruptions of NodePool %s: %s", np.Name, a.Cause)
		case !a.Unlimited && a.Count == 0 && r == budget.Unhealthy && !e.Initialized:
			out.Notes = append(out.Notes, "the budget allows no repair now, but an uninitialized node runs no workload to protect: Karpenter repairs it without using the budget")
		case !a.Unlimited && a.Count == 0:
			out.Stops = append(out.Stops, budgetStop(r, out.Budget, e))
		}
	}
	out.Candidate = len(e.StopsFor(r)) == 0 && len(out.Stops) == 0
	if np != nil && r == budget.Underutilized && np.Spec.Disruption.ConsolidationPolicy == karpenter.ConsolidationBalanced && np.Spec.Replicas == nil {
		out.Notes = append(out.Notes, "consolidationPolicy Balanced (Karpenter v1.14): Karpenter consolidates the node only when the move pays, the share of the NodePool's cost it saves being at least half the share of the NodePool's disruption cost it causes (score at least 1/k, k = 2), even deleting it outright; karpgate does not price nodes, so it cannot score the move (Karpenter's ConsolidationApproved event says when one passes)")
	}
	if out.Candidate && r == budget.Underutilized {
		out.Notes = append(out.Notes, "Karpenter replaces or removes the node only if its scheduling simulation finds the pods a cheaper home; karpgate does not simulate scheduling")
	}
	return out
}

type addStop func(kind StopKind, until *time.Time, format string, args ...any)

func driftStops(out *Reason, e *Explanation, add addStop) {
	switch d := e.Drift; {
	case d.Drifted:
	case d.Pending != nil && d.Pending.Newest != "":
		add(StopNotDrifted, nil, "not drifted yet, but its image %s is no longer the newest compatible AMI (%s): Karpenter marks it Drifted (AMIDrift) when it next checks", d.Pending.ImageID, d.Pending.Newest)
	case d.Pending != nil:
		add(StopNotDrifted, nil, "not drifted yet, but no AMI of its EC2NodeClass suits it any more: Karpenter marks it Drifted (AMIDrift) when it next checks")
	default:
		add(StopNotDrifted, nil, "not drifted: its NodeClaim has no Drifted=True condition")
		if d.Undecided != "" {
			out.Notes = append(out.Notes, "karpgate cannot tell whether its AMI will drift: "+d.Undecided)
		}
	}
}

func consolidationStops(r budget.Reason, in Input, add addStop) {
	np, nc := in.Pool.NodePool, in.NodeClaim
	if np.Spec.Disruption.ConsolidateAfter == karpenter.Never {
		add(StopConsolidationDisabled, nil, "NodePool %s has consolidateAfter: Never, which turns consolidation (Empty and Underutilized) off", np.Name)
		return
	}
	reschedulable := eviction.Reschedulable(in.Pods)
	switch {
	case r == budget.Empty && len(reschedulable) > 0:
		add(StopNotEmpty, nil, "not empty: %d pod(s) would need another node (%s); DaemonSet and mirror pods do not count", len(reschedulable), podNames(reschedulable))
	case r == budget.Underutilized && len(reschedulable) == 0 && in.Node != nil:
		add(StopEmpty, nil, "the node is empty: Karpenter removes empty nodes under Empty, and its Empty budgets apply")
	case r == budget.Underutilized && np.Spec.Disruption.ConsolidationPolicy == karpenter.ConsolidationWhenEmpty:
		add(StopWhenEmpty, nil, "NodePool %s has consolidationPolicy: WhenEmpty, so Karpenter consolidates only empty nodes", np.Name)
	}
	if c := nc.Condition(karpenter.ConditionConsolidatable); !c.IsTrue() {
		after := np.Spec.Disruption.ConsolidateAfter
		if after == "" {
			after = "0s"
		}
		msg := fmt.Sprintf("not consolidatable yet: Karpenter sets Consolidatable once consolidateAfter (%s) has passed since a pod was last scheduled on or removed from the node", after)
		if c != nil {
			msg += fmt.Sprintf(" (Consolidatable=%s since %s)", c.Status, c.LastTransitionTime.UTC().Format(time.RFC3339))
		}
		add(StopNotConsolidatable, nil, "%s", msg)
	}
}

// podStops: pods that block eviction stop consolidation always, drift
// unless a terminationGracePeriod bounds the drain (Karpenter's eventual
// disruption class), and repair only when neither the repair policy nor
// the NodeClaim bounds it.
func podStops(r budget.Reason, out *Reason, nc *state.NodeClaim, e *Explanation, add addStop) {
	blockers := e.Pods.Blockers
	if len(blockers) == 0 {
		return
	}
	if r == budget.Unhealthy {
		bound := "the NodeClaim's terminationGracePeriod (" + durationOf(nc) + ") bounds the drain, so Karpenter repairs the node anyway"
		if nc.Spec.TerminationGracePeriod == nil {
			bound = "Karpenter repairs the node anyway if the repair policy that matches it bounds the drain with a terminationGracePeriod (the AWS and kwok providers' policies do), and reports it blocked otherwise"
		}
		out.Notes = append(out.Notes, fmt.Sprintf("%d pod(s) block eviction: %s", len(blockers), bound))
		return
	}
	if r == budget.Drifted && nc.Spec.TerminationGracePeriod != nil {
		out.Notes = append(out.Notes, fmt.Sprintf("%d pod(s) block eviction, but the NodeClaim's terminationGracePeriod (%s) bounds the drain: Karpenter drifts the node anyway and deletes those pods at the latest %s after draining starts",
			len(blockers), nc.Spec.TerminationGracePeriod.Duration, nc.Spec.TerminationGracePeriod.Duration))
		return
	}
	var until *time.Time
	for _, b := range blockers {
		if b.Until == nil {
			until = nil
			break
		}
		if until == nil || b.Until.After(*until) {
			until = b.Until
		}
	}
	add(StopPods, until, "%d pod(s) block eviction: %s", len(blockers), blockerSummary(blockers))
}

func durationOf(nc *state.NodeClaim) string {
	if nc.Spec.TerminationGracePeriod == nil {
		return ""
	}
	return nc.Spec.TerminationGracePeriod.Duration.String()
}

func blockerSummary(blockers []eviction.Blocker) string {
	const most = 3
	var parts []string
	for i, b := range blockers {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(blockers)-most))
			break
		}
		switch b.Kind {
		case eviction.DoNotDisruptPod:
			parts = append(parts, b.Pod+" (do-not-disrupt)")
		default:
			parts = append(parts, b.Pod+" (PodDisruptionBudget "+strings.Join(b.PDBs, ", ")+")")
		}
	}
	return strings.Join(parts, ", ")
}

// budgetOf reads the reason's allowance from the NodePool's status, and
// when it next allows one.
func budgetOf(r budget.Reason, in Input, st status.NodePool, now time.Time) Budget {
	b := Budget{Allowed: st.Allowed[r], NextChange: st.NextChange[r].At}
	budgets, err := status.BudgetsOf(in.Pool.NodePool)
	if err != nil {
		b.Why = err.Error()
		return b
	}
	b.Why = why(r, b.Allowed, budgets, st)
	set := budget.CompileSetFor(st.Reasons, budgets)
	if next, err := set.NextAllowed(st.Counts(), now, status.Horizon); err == nil && !next[r].IsZero() {
		at := next[r]
		b.NextAllowed = &at
	}
	if free, err := set.NextAllowed(budget.Counts{Nodes: st.Nodes}, now, status.Horizon); err == nil && !free[r].IsZero() &&
		(b.NextAllowed == nil || !b.NextAllowed.Equal(free[r])) {
		at := free[r]
		b.NextFree = &at
	}
	if m := st.Guard.Marker; st.Guard.Held && slices.Contains(b.Allowed.Binding, m.Index) {
		switch {
		case m.Frozen():
			b.Hold = holdrecord.ByFreeze
		case m.RolloutPlan() != "":
			b.Hold = HoldWave
			b.RolloutPlan = m.RolloutPlan()
		default:
			b.Hold = "rollout-guard"
		}
	}
	return b
}

// why names the binding budgets: "budgets[1] (nodes "0", "0 9 * * mon-fri"
// for 8h, Drifted)", or says no budget covers the reason.
func why(r budget.Reason, a budget.Allowance, budgets []budget.Budget, st status.NodePool) string {
	switch {
	case a.Blocked:
		return "blocked: " + a.Cause
	case a.Unlimited:
		return fmt.Sprintf("unlimited: no active budget covers %s", r)
	}
	var names []string
	for _, i := range a.Binding {
		for _, b := range budgets {
			if b.Index == i {
				names = append(names, b.Name())
			}
		}
	}
	s := strings.Join(names, " and ")
	if a.Limit > 0 {
		s += fmt.Sprintf(": %d of %d node(s) at once, %d already disrupting", a.Limit, st.Nodes, st.Counts().Consuming(r))
	}
	return s
}

func budgetStop(r budget.Reason, b Budget, e *Explanation) Stop {
	var msg string
	if b.Allowed.Limit > 0 {
		msg = fmt.Sprintf("the budget is used up: %s", b.Why)
	} else {
		msg = fmt.Sprintf("%s allows no %s disruption now", b.Why, r)
	}
	switch b.Hold {
	case holdrecord.ByFreeze:
		msg += fmt.Sprintf("; it is karpgate's freeze: `karpgate resume %s` (or --all) lifts it", e.NodePool)
	case "rollout-guard":
		msg += fmt.Sprintf("; it is karpgate's rollout guard hold: `karpgate resume %s` lifts it", e.NodePool)
	case HoldWave:
		msg += fmt.Sprintf("; it is the wave hold of rollout plan %s: the plan releases NodePool %s when its wave comes (`karpgate rollout status %s` shows where it stands)", b.RolloutPlan, e.NodePool, b.RolloutPlan)
	}
	return Stop{Kind: StopBudget, Message: msg, Until: b.NextAllowed, Free: b.NextFree}
}
