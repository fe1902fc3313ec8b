package explain

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/drift"
	"github.com/karpgate/karpgate/disruption/eviction"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Input is everything an explanation depends on.
type Input struct {
	// NodeClaim is nil for a Node Karpenter does not manage; Node is nil
	// for a NodeClaim whose node has not registered.
	NodeClaim *state.NodeClaim
	Node      *corev1.Node
	// PoolName is the NodePool the node belongs to (its label); Pool holds
	// the NodePool (nil when it does not exist) with its NodeClaims, Nodes
	// and EC2NodeClasses, from which the budgets are computed.
	PoolName string
	Pool     state.Pool
	// Pods are the pods bound to the node; PDBs those of their namespaces.
	Pods []*state.Pod
	PDBs state.PDBsByNamespace
	// Reasons are the disruption reasons of the Karpenter release judged
	// (nil: the newest, budget.Reasons): Unhealthy, node repair, from v1.15.
	Reasons []budget.Reason
}

// Explain says at now why the node is or is not a candidate for each
// reason. It reads nothing but its input.
func Explain(in Input, now time.Time) *Explanation {
	now = now.UTC()
	e := &Explanation{At: now, NodePool: in.PoolName, StopsEveryReason: []Stop{}}
	if in.NodeClaim != nil {
		e.NodeClaim = in.NodeClaim.Name
	}
	if in.Node != nil {
		e.Node = in.Node.Name
		e.Initialized = in.Node.Labels[karpenter.NodeInitializedLabel] == "true"
	}
	if in.Reasons == nil {
		in.Reasons = budget.Reasons
	}
	var st *status.NodePool
	if in.Pool.NodePool != nil {
		s := status.Compute(in.Pool, in.Reasons, now)
		st = &s
		e.Nodes, e.Disrupting, e.NotReady = s.Nodes, s.Disrupting, s.NotReady
		e.DisruptingNodes = disruptingNodes(in.Pool)
	}
	e.Drift = driftOf(in)
	e.Expiry = expiryOf(in.NodeClaim, now)
	e.Pods = eviction.Check(in.Pods, in.PDBs, now)
	e.StopsEveryReason = everyReason(in, e)
	for _, r := range in.Reasons {
		e.Reasons = append(e.Reasons, explainReason(r, in, e, st, now))
	}
	return e
}

// everyReason lists what stops the node before any reason is considered,
// in the order of Karpenter's checks (ValidateNodeDisruptable). Node repair
// (Unhealthy, Karpenter v1.15) is not discretionary: it acts on a node that
// is not initialized (if registered) or carries do-not-disrupt, so those
// stops spare it.
func everyReason(in Input, e *Explanation) []Stop {
	stops := []Stop{}
	add := func(kind StopKind, format string, args ...any) *Stop {
		stops = append(stops, Stop{Kind: kind, Message: fmt.Sprintf(format, args...)})
		return &stops[len(stops)-1]
	}
	repair := slices.Contains(in.Reasons, budget.Unhealthy)
	spareRepair := func(s *Stop, why string) {
		if repair {
			s.Spares = []budget.Reason{budget.Unhealthy}
			s.Message += "; node repair " + why
		}
	}
	nc, node := in.NodeClaim, in.Node
	switch {
	case nc == nil && node == nil:
		return stops // Gather never gives neither
	case nc == nil && in.PoolName == "":
		add(StopNotManaged, "node %s has no %s label: Karpenter does not manage it", node.Name, karpenter.NodePoolLabel)
		return stops
	case nc == nil:
		add(StopNotManaged, "node %s has no NodeClaim with its provider ID %q: Karpenter does not disrupt a node it has no NodeClaim for", node.Name, node.Spec.ProviderID)
		return stops
	case node == nil:
		add(StopNoNode, "NodeClaim %s has no Node yet (not launched or not registered): nothing to disrupt", nc.Name)
	}
	if in.Pool.NodePool == nil {
		add(StopNoNodePool, "NodePool %q does not exist: Karpenter skips nodes whose NodePool it cannot find", in.PoolName)
	}
	if nc.Condition(karpenter.ConditionRebooting).IsTrue() {
		add(StopRebooting, "node repair is rebooting it in place (its NodeClaim is Rebooting): no disruption picks a rebooting node")
	}
	if node != nil && !e.Initialized {
		s := add(StopNotInitialized, "node %s is not initialized (no %s=true): Karpenter disrupts only initialized nodes", node.Name, karpenter.NodeInitializedLabel)
		if node.Labels[karpenter.NodeRegisteredLabel] == "true" {
			spareRepair(s, "still acts on it, needing no budget: nothing else replaces a node that never initializes")
		}
	}
	if nc.DeletionTimestamp != nil || (node != nil && node.DeletionTimestamp != nil) {
		add(StopDeleting, "it is being deleted: Karpenter is already removing it")
	} else if node != nil && state.HasTaint(node, karpenter.DisruptedTaintKey) {
		add(StopDisrupting, "node %s carries the %s taint: Karpenter is already disrupting it", node.Name, karpenter.DisruptedTaintKey)
	}
	// Karpenter reads the annotation from the Node once it has registered,
	// from the NodeClaim before.
	annotations, on := nc.Annotations, "NodeClaim "+nc.Name
	if node != nil {
		annotations, on = node.Annotations, "node "+node.Name
	}
	if annotations[karpenter.DoNotDisruptAnnotation] == "true" {
		s := add(StopDoNotDisruptNode, "%s has %s: \"true\"; remove the annotation to let Karpenter disrupt it", on, karpenter.DoNotDisruptAnnotation)
		spareRepair(s, "ignores it: "+karpenter.DoNotRepairAnnotation+": \"true\" is what keeps repair off a node")
	}
	return stops
}

func disruptingNodes(pool state.Pool) []DisruptingNode {
	claims := state.ClaimsByProviderID(pool.NodeClaims)
	var out []DisruptingNode
	for _, n := range pool.Nodes {
		nc := claims[n.Spec.ProviderID]
		if !status.Counted(n, nc) {
			continue
		}
		if why := status.DisruptingWhy(n, nc); why != "" {
			out = append(out, DisruptingNode{Node: n.Name, Why: why})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func driftOf(in Input) Drift {
	var d Drift
	nc := in.NodeClaim
	if nc == nil {
		return d
	}
	if c := nc.Condition(karpenter.ConditionDrifted); c.IsTrue() {
		since := c.LastTransitionTime.UTC()
		d.Drifted, d.Reason, d.Since = true, c.Reason, &since
		return d
	}
	outlook := drift.WillDrift([]*state.NodeClaim{nc}, in.Pool.NodeClasses)
	if len(outlook.Pending) > 0 {
		d.Pending = &outlook.Pending[0]
	}
	if len(outlook.Undecided) > 0 {
		d.Undecided = outlook.Undecided[0].Why
	}
	return d
}

func expiryOf(nc *state.NodeClaim, now time.Time) Expiry {
	var x Expiry
	if nc == nil {
		return x
	}
	x.ExpireAfter = nc.Spec.ExpireAfter
	if d, err := time.ParseDuration(nc.Spec.ExpireAfter); err == nil && nc.Spec.ExpireAfter != karpenter.Never {
		at := nc.CreationTimestamp.Add(d).UTC()
		x.ExpiresAt, x.Expired = &at, !now.Before(at)
	}
	if tgp := nc.Spec.TerminationGracePeriod; tgp != nil {
		x.TerminationGracePeriod = tgp.Duration.String()
	}
	if nc.DeletionTimestamp != nil {
		since := nc.DeletionTimestamp.UTC()
		x.DeletingSince = &since
		if tgp := nc.Spec.TerminationGracePeriod; tgp != nil {
			deadline := since.Add(tgp.Duration)
			x.DrainDeadline = &deadline
		}
	}
	return x
}

// podNames lists up to a few pod keys, "and N more" beyond.
func podNames(pods []*state.Pod) string {
	const most = 3
	names := make([]string, 0, most)
	for i, p := range pods {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more", len(pods)-most))
			break
		}
		names = append(names, p.Key())
	}
	return strings.Join(names, ", ")
}
