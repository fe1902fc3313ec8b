package gates

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Result is the verdict on a wave.
type Result struct {
	// Gates in a fixed order: NodesReady, NodeClaimsLaunched, PodsReady.
	Gates []v1alpha1.GateStatus
	// Failure is the first failing gate's condition reason and message,
	// nil while every gate passes or waits.
	Failure *Failure
	// Waiting: a new NodeClaim is still within its nodeReadyTimeout
	// without a Ready Node, so the wave's replacement is not done yet.
	Waiting bool
	// Next is when a verdict changes with time alone (a NodeClaim or a pod
	// reaches its timeout); zero when none will.
	Next time.Time
}

// Failure is a failing gate in the terms of the plan's Stalled condition.
type Failure struct {
	Gate, Reason, Message string
}

// listed is how many names a message lists before "and N more".
const listed = 5

// Evaluate judges the NodeClaims of pools created at or after since.
func Evaluate(pools []state.Pool, since time.Time, g v1alpha1.EffectiveGates, now time.Time) Result {
	var r Result
	// creationTimestamp has whole seconds: a NodeClaim created in the
	// second the wave started counts as launched for it.
	since = since.Truncate(time.Second)
	newClaims, nodes := newNodeClaims(pools, since)
	r.nodesReady(newClaims, nodes, g, now)
	r.launched(pools, newClaims, since, g)
	r.podsReady(pools, newClaims, g, now)
	return r
}

type claim struct {
	pool string
	nc   *state.NodeClaim
}

func newNodeClaims(pools []state.Pool, since time.Time) ([]claim, map[string]*corev1.Node) {
	var out []claim
	nodes := map[string]*corev1.Node{}
	for _, p := range pools {
		for k, n := range state.NodesByProviderID(p.Nodes) {
			nodes[k] = n
		}
		for _, nc := range p.NodeClaims {
			if nc.CreationTimestamp.Time.Before(since) || nc.DeletionTimestamp != nil ||
				nc.Condition(karpenter.ConditionDrifted).IsTrue() || nc.Condition(karpenter.ConditionInstanceTerminating).IsTrue() {
				continue
			}
			out = append(out, claim{pool: p.NodePool.Name, nc: nc})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].nc.Name < out[j].nc.Name })
	return out, nodes
}

func (r *Result) wake(at time.Time) {
	if r.Next.IsZero() || at.Before(r.Next) {
		r.Next = at
	}
}

func (r *Result) add(name string, result v1alpha1.GateResult, message, reason string) {
	r.Gates = append(r.Gates, v1alpha1.GateStatus{Name: name, Result: result, Message: message})
	if result == v1alpha1.GateFailing && r.Failure == nil {
		r.Failure = &Failure{Gate: name, Reason: reason, Message: message}
	}
}

func (r *Result) nodesReady(claims []claim, nodes map[string]*corev1.Node, g v1alpha1.EffectiveGates, now time.Time) {
	var late, waiting []string
	ready := 0
	for _, c := range claims {
		if n := nodes[c.nc.Status.ProviderID]; c.nc.Status.ProviderID != "" && n != nil && state.NodeReady(n) {
			ready++
			continue
		}
		deadline := c.nc.CreationTimestamp.Add(g.NodeReadyTimeout)
		if now.Before(deadline) {
			waiting = append(waiting, c.nc.Name)
			r.wake(deadline)
			continue
		}
		late = append(late, c.nc.Name)
	}
	switch {
	case len(late) > 0:
		r.add(v1alpha1.GateNodesReady, v1alpha1.GateFailing,
			fmt.Sprintf("%d new NodeClaim(s) have no Ready Node %s after launch: %s", len(late), g.NodeReadyTimeout, names(late)), v1alpha1.ReasonNodesNotReady)
	case len(waiting) > 0:
		r.Waiting = true
		r.add(v1alpha1.GateNodesReady, v1alpha1.GateWaiting,
			fmt.Sprintf("%d of %d new NodeClaim(s) have a Ready Node; waiting up to %s after launch for %s", ready, len(claims), g.NodeReadyTimeout, names(waiting)), "")
	default:
		r.add(v1alpha1.GateNodesReady, v1alpha1.GatePassing, fmt.Sprintf("%d new NodeClaim(s), each with a Ready Node", len(claims)), "")
	}
}

// launchFailure says why a NodeClaim failed to launch, register or
// initialize, "" when it has not.
func launchFailure(nc *state.NodeClaim) string {
	for _, t := range []string{karpenter.ConditionLaunched, karpenter.ConditionRegistered, karpenter.ConditionInitialized} {
		c := nc.Condition(t)
		if c == nil {
			continue
		}
		if c.Status == "False" {
			return t + "=False (" + c.Reason + ")"
		}
		// Karpenter leaves Launched Unknown with the launch error's reason
		// while it retries the launch.
		if t == karpenter.ConditionLaunched && c.Status == "Unknown" && c.Reason != "" && c.Reason != karpenter.ConditionAwaitingReconciliation {
			return t + "=Unknown (" + c.Reason + ")"
		}
	}
	return ""
}

func (r *Result) launched(pools []state.Pool, claims []claim, since time.Time, g v1alpha1.EffectiveGates) {
	var failed []string
	for _, c := range claims {
		if why := launchFailure(c.nc); why != "" {
			failed = append(failed, c.nc.Name+" "+why)
		}
	}
	for _, p := range pools {
		for _, c := range p.NodePool.Status.Conditions {
			if c.Type == karpenter.ConditionNodeRegistrationHealthy && c.Status == "False" && !c.LastTransitionTime.Time.Before(since) {
				failed = append(failed, "NodePool "+p.NodePool.Name+" NodeRegistrationHealthy=False ("+c.Reason+")")
			}
		}
	}
	if int32(len(failed)) > g.MaxFailedNodeClaims { //nolint:gosec // a count of objects
		r.add(v1alpha1.GateNodeClaimsLaunched, v1alpha1.GateFailing,
			fmt.Sprintf("%d failure(s) to launch, register or initialize, more than the %d allowed: %s", len(failed), g.MaxFailedNodeClaims, names(failed)), v1alpha1.ReasonNodeClaimsFailed)
		return
	}
	msg := fmt.Sprintf("%d failure(s) to launch, register or initialize (%d allowed)", len(failed), g.MaxFailedNodeClaims)
	if len(failed) > 0 {
		msg += ": " + names(failed)
	}
	r.add(v1alpha1.GateNodeClaimsLaunched, v1alpha1.GatePassing, msg, "")
}

func (r *Result) podsReady(pools []state.Pool, claims []claim, g v1alpha1.EffectiveGates, now time.Time) {
	if g.MinPodsReadyPercent == 0 {
		r.add(v1alpha1.GatePodsReady, v1alpha1.GatePassing, "off (minPodsReadyPercent: 0)", "")
		return
	}
	onNew := map[string]bool{}
	for _, c := range claims {
		if c.nc.Status.NodeName != "" {
			onNew[c.nc.Status.NodeName] = true
		}
	}
	judged, ready := 0, 0
	var unready []string
	for _, p := range pools {
		for node, pods := range p.Pods {
			if !onNew[node] {
				continue
			}
			for _, pod := range pods {
				if pod.DeletionTimestamp != nil || pod.Status.StartTime == nil {
					continue
				}
				if podReady(pod) {
					if !now.Before(pod.Status.StartTime.Add(g.PodReadyTimeout)) {
						judged++
						ready++
					}
					continue
				}
				if deadline := pod.Status.StartTime.Add(g.PodReadyTimeout); now.Before(deadline) {
					r.wake(deadline)
					continue
				}
				judged++
				unready = append(unready, pod.Key())
			}
		}
	}
	sort.Strings(unready)
	if judged > 0 && ready*100 < int(g.MinPodsReadyPercent)*judged {
		r.add(v1alpha1.GatePodsReady, v1alpha1.GateFailing,
			fmt.Sprintf("%d of %d pod(s) on the new nodes are Ready %s after they started, below %d%%: not Ready: %s", ready, judged, g.PodReadyTimeout, g.MinPodsReadyPercent, names(unready)), v1alpha1.ReasonPodsNotReady)
		return
	}
	r.add(v1alpha1.GatePodsReady, v1alpha1.GatePassing, fmt.Sprintf("%d of %d pod(s) on the new nodes Ready (at least %d%%)", ready, judged, g.MinPodsReadyPercent), "")
}

func podReady(p *state.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func names(list []string) string {
	if len(list) <= listed {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:listed], ", ") + fmt.Sprintf(" and %d more", len(list)-listed)
}
