package status

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/state"
)

// RepairStopPercent is node repair's circuit breaker (Karpenter v1.15):
// while more than this share of a NodePool's nodes is unhealthy (rounded
// up, so one unhealthy node never stops repair of a small NodePool),
// Karpenter repairs none of them. A correlated failure (a bad AMI, a zone
// outage) is not fixed by replacing nodes one by one.
const RepairStopPercent = 20

// UnhealthyCondition returns the node's Ready condition when it is False
// or Unknown: the condition every cloud provider's repair policies match
// (AWS's and kwok's do), and the one karpgate reads. A provider's policies
// may match other conditions too (the AWS provider's match the Node
// Monitoring Agent's, such as AcceleratedHardwareReady=False), which
// karpgate does not judge.
func UnhealthyCondition(n *corev1.Node) *corev1.NodeCondition {
	for i, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && (c.Status == corev1.ConditionFalse || c.Status == corev1.ConditionUnknown) {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// Repair is what node repair (the Unhealthy reason) sees of a NodePool.
type Repair struct {
	// Nodes counts every node carrying the NodePool's label, initialized
	// or not, as the circuit breaker does; Unhealthy those whose Ready
	// condition is False or Unknown.
	Nodes     int `json:"nodes"`
	Unhealthy int `json:"unhealthy"`
	// StopAbove is the most unhealthy nodes repair goes on with:
	// RepairStopPercent of Nodes, rounded up.
	StopAbove int `json:"stopAbove"`
	// Stopped: more than StopAbove nodes are unhealthy, and Karpenter
	// repairs none of the NodePool's nodes until fewer are.
	Stopped bool `json:"stopped,omitempty"`
}

// repairOf reads node repair's view of the pool, nil when the release
// judged has no Unhealthy reason.
func repairOf(pool state.Pool, reasons []budget.Reason) *Repair {
	if !slices.Contains(reasons, budget.Unhealthy) {
		return nil
	}
	r := &Repair{Nodes: len(pool.Nodes)}
	for _, n := range pool.Nodes {
		if UnhealthyCondition(n) != nil {
			r.Unhealthy++
		}
	}
	r.StopAbove = int(math.Ceil(float64(RepairStopPercent) * float64(r.Nodes) / 100))
	r.Stopped = r.Unhealthy > r.StopAbove
	return r
}
