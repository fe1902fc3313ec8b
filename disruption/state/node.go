package state

import (
	corev1 "k8s.io/api/core/v1"
)

// NodeReady reports whether the node's Ready condition is True. A node
// without the condition is not ready, as Karpenter reads it.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// HasTaint reports whether the node carries a taint with key, whatever its
// value or effect.
func HasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// ClaimsByProviderID indexes NodeClaims by status.providerID, the key
// Karpenter pairs a NodeClaim with its Node by. NodeClaims without one (not
// launched yet) are left out.
func ClaimsByProviderID(claims []*NodeClaim) map[string]*NodeClaim {
	out := make(map[string]*NodeClaim, len(claims))
	for _, nc := range claims {
		if nc.Status.ProviderID != "" {
			out[nc.Status.ProviderID] = nc
		}
	}
	return out
}

// NodesByProviderID indexes Nodes by spec.providerID.
func NodesByProviderID(nodes []*corev1.Node) map[string]*corev1.Node {
	out := make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		if n.Spec.ProviderID != "" {
			out[n.Spec.ProviderID] = n
		}
	}
	return out
}
