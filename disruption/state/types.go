package state

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool is the part of a karpenter.sh/v1 NodePool the loop reads.
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodePoolSpec   `json:"spec"`
	Status            NodePoolStatus `json:"status,omitempty"`
}

// NodePoolStatus keeps the one condition a rollout plan reads: whether
// Karpenter saw the pool's NodeClaims fail to launch or register.
type NodePoolStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
}

// NodePoolSpec keeps the budgets, the consolidation settings and the node
// class the pool launches with.
type NodePoolSpec struct {
	Disruption NodePoolDisruption `json:"disruption"`
	Template   NodePoolTemplate   `json:"template"`
	// Replicas is set on a static NodePool (Karpenter v1.8 and later),
	// which Karpenter never consolidates and replaces drifted nodes of
	// within the Drifted budget and Limits.Nodes.
	Replicas *int64         `json:"replicas,omitempty"`
	Limits   NodePoolLimits `json:"limits,omitempty"`
}

// NodePoolLimits keeps the one limit the loop reads: how many nodes the
// NodePool may have, which bounds a static NodePool's replacements.
type NodePoolLimits struct {
	Nodes *resource.Quantity `json:"nodes,omitempty"`
}

// NodePoolDisruption keeps spec.disruption.budgets as decoded JSON, nil when
// absent or null: budget.FromNodePool is the one reader of budgets, so the
// loop hands it exactly what the API server stored. ConsolidateAfter is
// "Never" when consolidation is off, a duration otherwise.
type NodePoolDisruption struct {
	Budgets             []any  `json:"budgets"`
	ConsolidationPolicy string `json:"consolidationPolicy,omitempty"`
	ConsolidateAfter    string `json:"consolidateAfter,omitempty"`
}

// NodePoolTemplate is spec.template.
type NodePoolTemplate struct {
	Spec NodePoolTemplateSpec `json:"spec"`
}

// NodePoolTemplateSpec is spec.template.spec.
type NodePoolTemplateSpec struct {
	NodeClassRef NodeClassRef `json:"nodeClassRef"`
}

// NodeClassRef names the node class of a NodePool template or NodeClaim.
type NodeClassRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// NodePoolList is a list of NodePools.
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}

// NodeClaim is the part of a karpenter.sh/v1 NodeClaim the loop reads.
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodeClaimSpec   `json:"spec"`
	Status            NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimSpec keeps the node class reference and the two timers of a
// node's life: expireAfter ("Never" or a duration; expiry is forceful) and
// terminationGracePeriod (how long a drain may be blocked).
type NodeClaimSpec struct {
	NodeClassRef           NodeClassRef     `json:"nodeClassRef"`
	ExpireAfter            string           `json:"expireAfter,omitempty"`
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
}

// NodeClaimStatus keeps what pairs a NodeClaim with its Node, its image and
// its conditions.
type NodeClaimStatus struct {
	ProviderID string      `json:"providerID,omitempty"`
	NodeName   string      `json:"nodeName,omitempty"`
	ImageID    string      `json:"imageID,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition is a status condition without its message.
type Condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// NodeClaimList is a list of NodeClaims.
type NodeClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeClaim `json:"items"`
}

// EC2NodeClass is the part of a karpenter.k8s.aws/v1 EC2NodeClass the loop
// reads: the AMIs Karpenter resolved, newest first.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassStatus is status of an EC2NodeClass.
type EC2NodeClassStatus struct {
	AMIs []AMI `json:"amis,omitempty"`
}

// AMI is one entry of EC2NodeClass status.amis.
type AMI struct {
	ID           string                           `json:"id"`
	Name         string                           `json:"name,omitempty"`
	Deprecated   bool                             `json:"deprecated,omitempty"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// EC2NodeClassList is a list of EC2NodeClasses.
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}

// Condition returns the condition of type t, or nil.
func (c *NodeClaim) Condition(t string) *Condition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == t {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition exists with status True.
func (c *Condition) IsTrue() bool { return c != nil && c.Status == string(metav1.ConditionTrue) }
