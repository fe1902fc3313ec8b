package explain

import (
	"fmt"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// repairStops applies node repair's own rules (Karpenter v1.15's Repair
// method): karpenter.sh/do-not-repair, a condition that matches a repair
// policy, and the circuit breaker that stops repair of a NodePool whose
// nodes fail together.
func repairStops(in Input, st *status.NodePool, out *Reason, add addStop) {
	node := in.Node
	if node == nil {
		return
	}
	out.Notes = append(out.Notes, "node repair runs only with Karpenter's NodeRepair feature gate (alpha, off by default) and without --legacy-node-repair; karpgate cannot see Karpenter's flags")
	if node.Annotations[karpenter.DoNotRepairAnnotation] == "true" {
		add(StopDoNotRepair, nil, "node %s has %s: \"true\": node repair leaves it alone; remove the annotation to let Karpenter repair it", node.Name, karpenter.DoNotRepairAnnotation)
	}
	if c := status.UnhealthyCondition(node); c == nil {
		add(StopHealthy, nil, "node %s is Ready: node repair acts on a node whose conditions match one of the cloud provider's repair policies (Ready False or Unknown past the policy's toleration, and others karpgate does not judge)", node.Name)
	} else {
		since := "since it registered"
		if !c.LastTransitionTime.IsZero() {
			since = "since " + c.LastTransitionTime.UTC().Format(time.RFC3339)
		}
		out.Notes = append(out.Notes, fmt.Sprintf("Ready has been %s %s: Karpenter repairs the node once the matching repair policy's toleration has passed (measured from then, or from the end of its last reboot)", c.Status, since))
	}
	if st != nil && st.Repair != nil && st.Repair.Stopped {
		r := st.Repair
		add(StopRepairStopped, nil, "%d of NodePool %s's %d nodes are not Ready, more than %d%% (%d): Karpenter takes it for a correlated failure and repairs none of them until at most %d are",
			r.Unhealthy, in.PoolName, r.Nodes, status.RepairStopPercent, r.StopAbove, r.StopAbove)
	}
}

// staticStops applies a static NodePool's rules (Karpenter v1.8's
// StaticDrift, which v1.15's repair mirrors): a replacement is built from
// the template while the NodePool is not scaling down, and only within
// limits.nodes.
func staticStops(r budget.Reason, in Input, out *Reason, add addStop) {
	np := in.Pool.NodePool
	if np.Spec.Replicas == nil {
		return
	}
	replicas := *np.Spec.Replicas
	if r == budget.Drifted {
		out.Notes = append(out.Notes, fmt.Sprintf("NodePool %s is static (spec.replicas: %d): Karpenter replaces a drifted node with one built from the template, within the Drifted budget and limits.nodes (Karpenter v1.8 and later)", np.Name, replicas))
	}
	all, live := int64(len(in.Pool.NodeClaims)), int64(0)
	for _, nc := range in.Pool.NodeClaims {
		if nc.DeletionTimestamp == nil {
			live++
		}
	}
	if live > replicas {
		add(StopStaticScalingDown, nil, "NodePool %s has %d NodeClaims for spec.replicas %d: Karpenter replaces no node until its scale-down is done", np.Name, live, replicas)
	}
	if limit := np.Spec.Limits.Nodes; limit != nil && all >= limit.Value() {
		gate := "TerminateFirstDrift"
		if r == budget.Unhealthy {
			gate = "TerminateFirstRepair"
		}
		add(StopStaticAtLimit, nil, "NodePool %s is at limits.nodes (%d NodeClaims, limit %s): Karpenter cannot stage a replacement, so it reports the node blocked (with the %s feature gate it deletes the node first and lets the NodePool refill)",
			np.Name, all, limit.String(), gate)
	}
}
