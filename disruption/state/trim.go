package state

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// Trim cuts an object down to the fields the disruption loop reads, in place,
// and returns it: the cache transform of every watched kind. Objects of other
// types pass through untouched. Trimming twice is harmless, and status
// computed from a trimmed object equals status computed from the original.
// Trim only replaces fields, never writing into the maps and slices it
// drops, so it is safe on shallow copies of cached objects.
func Trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *NodePool:
		// Labels stay: rollout plans select NodePools by them.
		trimMeta(&o.ObjectMeta, isKarpgateKey, keepEvery)
		o.Status.Conditions = keepNodePoolConditions(o.Status.Conditions)
	case *NodeClaim:
		trimMeta(&o.ObjectMeta, isDoNotDisrupt, isNodeClaimLabel)
		o.Status.Conditions = keepConditions(o.Status.Conditions)
	case *EC2NodeClass:
		trimMeta(&o.ObjectMeta, nil, nil)
	case *corev1.Node:
		trimNode(o)
	case *Pod:
		trimPod(o)
	case *PodDisruptionBudget:
		trimPDB(o)
	}
	return obj, nil
}

func trimMeta(m *metav1.ObjectMeta, keepAnnotation, keepLabel func(string) bool) {
	m.ManagedFields = nil
	m.OwnerReferences = nil
	m.Finalizers = nil
	m.GenerateName = ""
	m.Annotations = filterKeys(m.Annotations, keepAnnotation)
	m.Labels = filterKeys(m.Labels, keepLabel)
}

// filterKeys returns a fresh map so that the original, with everything it
// holds, can be collected.
func filterKeys(m map[string]string, keep func(string) bool) map[string]string {
	if keep == nil || len(m) == 0 {
		return nil
	}
	var out map[string]string
	for k, v := range m {
		if !keep(k) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

func isKarpgateKey(k string) bool  { return strings.HasPrefix(k, "karpgate.io/") }
func isDoNotDisrupt(k string) bool { return k == karpenter.DoNotDisruptAnnotation }

// isNodeAnnotation keeps what stops disruption or repair of a node.
func isNodeAnnotation(k string) bool {
	return k == karpenter.DoNotDisruptAnnotation || k == karpenter.DoNotRepairAnnotation
}

// isNodeClaimLabel keeps the pool label and the instance-type labels AMI
// requirements select on; drift.WillDrift refuses to judge a requirement on
// any other key rather than misread a trimmed label as absent.
func isNodeClaimLabel(k string) bool {
	if k == karpenter.NodePoolLabel {
		return true
	}
	for _, l := range karpenter.AMIRequirementLabels {
		if k == l {
			return true
		}
	}
	return false
}

func isNodeLabel(k string) bool {
	return k == karpenter.NodePoolLabel || k == karpenter.NodeInitializedLabel || k == karpenter.NodeRegisteredLabel
}

// keepConditions keeps the NodeClaim conditions the loop reads. They change
// a few times in a node's life, unlike lastPodEventTime, which is dropped.
func keepConditions(in []Condition) []Condition {
	var out []Condition
	for _, c := range in {
		switch c.Type {
		case karpenter.ConditionDrifted, karpenter.ConditionInstanceTerminating,
			karpenter.ConditionInitialized, karpenter.ConditionConsolidatable, karpenter.ConditionRebooting,
			karpenter.ConditionLaunched, karpenter.ConditionRegistered:
			out = append(out, c)
		}
	}
	return out
}

// keepNodePoolConditions keeps NodeRegistrationHealthy, which a rollout
// plan's NodeClaimsLaunched gate reads.
func keepNodePoolConditions(in []Condition) []Condition {
	var out []Condition
	for _, c := range in {
		if c.Type == karpenter.ConditionNodeRegistrationHealthy {
			out = append(out, c)
		}
	}
	return out
}

func keepEvery(string) bool { return true }

func trimNode(n *corev1.Node) {
	trimMeta(&n.ObjectMeta, isNodeAnnotation, isNodeLabel)
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key == karpenter.DisruptedTaintKey {
			taints = append(taints, corev1.Taint{Key: t.Key, Effect: t.Effect})
		}
	}
	n.Spec = corev1.NodeSpec{ProviderID: n.Spec.ProviderID, Taints: taints}
	var ready []corev1.NodeCondition
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = append(ready, corev1.NodeCondition{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime})
		}
	}
	n.Status = corev1.NodeStatus{Conditions: ready}
}
