package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutPlan carries drift through the fleet in waves: the NodePools of
// the first wave roll while karpgate holds every other NodePool of the plan
// with Karpenter's own budget {nodes: "0", reasons: [Drifted]}; once the
// wave's drifted NodeClaims are replaced and its gates have held for its
// soak, the next wave is released. A gate that fails holds the wave and
// everything after it until `karpgate rollout resume`.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rp,categories=karpgate
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Wave",type=string,JSONPath=`.status.currentWave`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Held",type=integer,JSONPath=`.status.heldNodePools`,description="NodePools karpgate holds for the plan"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RolloutPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RolloutPlanSpec   `json:"spec"`
	Status RolloutPlanStatus `json:"status,omitempty"`
}

// RolloutPlanSpec is the plan as declared in Git.
type RolloutPlanSpec struct {
	// Waves in the order they roll. A NodePool belongs to the first wave
	// whose nodePoolSelector matches it (and whose nodePools count has room
	// for it); a NodePool no wave matches is not in the plan, and karpgate
	// leaves it alone.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	Waves []Wave `json:"waves"`

	// Gates every wave must pass, unless the wave sets its own. Fields left
	// out take karpgate's defaults (see Gates).
	// +optional
	Gates *Gates `json:"gates,omitempty"`

	// MaxRollingNodePools is how many NodePools of a wave may roll at once;
	// the wave's other drifted NodePools stay held until one is done.
	// Unset: every NodePool of the wave at once.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxRollingNodePools *int32 `json:"maxRollingNodePools,omitempty"`

	// DriftReasons are the reasons of NodeClaims' Drifted condition the plan
	// paces (NodePoolDrifted, NodeClassDrift, AMIDrift, RequirementsDrifted,
	// SubnetDrift, SecurityGroupDrift, ...). Empty: every drift. A NodePool
	// whose only drift has another reason is released while the plan has
	// nothing of its own to roll there, so that drift rolls at the
	// NodePool's own budgets.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	DriftReasons []DriftReason `json:"driftReasons,omitempty"`

	// Paused holds the next wave without failing the plan: the wave that is
	// rolling finishes and soaks, and the plan waits there until Paused is
	// false again (`karpgate rollout pause` and `resume` set it).
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// DriftReason is the reason of a NodeClaim's Drifted condition, as
// Karpenter and its cloud provider write it.
// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9]{0,62}$`
type DriftReason string

// Wave is one step of the plan.
type Wave struct {
	// Name of the wave, unique in the plan: canary, early, rest.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// NodePoolSelector picks the wave's NodePools by their labels, among
	// those no earlier wave took. {} picks every one left.
	NodePoolSelector metav1.LabelSelector `json:"nodePoolSelector"`

	// NodePools is how many of the NodePools the selector picks the wave
	// takes, in name order: a count of at least 1, or a percentage from 1%
	// to 100% rounded up (25% of 3 is 1). Unset: all of them. (Checked by
	// karpgate's admission webhook: a CEL rule on an int-or-string costs
	// more than the API server's budget for a list of waves.)
	// +kubebuilder:validation:XIntOrString
	// +optional
	NodePools *intstr.IntOrString `json:"nodePools,omitempty"`

	// Soak is how long the wave must stay healthy after its last drifted
	// NodeClaim is replaced before the next wave is released.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +optional
	Soak metav1.Duration `json:"soak,omitempty"`

	// Gates of this wave, field by field over the plan's gates.
	// +optional
	Gates *Gates `json:"gates,omitempty"`
}

// Gates are what a wave's new nodes must show while it rolls and soaks.
// Every field is optional; see rolloutplan_defaults.go for the defaults.
type Gates struct {
	// NodeReadyTimeout is how long a NodeClaim launched for the wave may go
	// without a Ready Node. Default 15m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +optional
	NodeReadyTimeout *metav1.Duration `json:"nodeReadyTimeout,omitempty"`

	// MaxFailedNodeClaims is how many NodeClaims launched for the wave may
	// fail to launch, register or initialize (a Launched, Registered or
	// Initialized condition False, or Launched left Unknown with Karpenter's
	// launch error) before the wave fails. Default 0.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxFailedNodeClaims *int32 `json:"maxFailedNodeClaims,omitempty"`

	// MinPodsReadyPercent is the share of the pods on the wave's new nodes
	// that must be Ready, counting pods that have run at least
	// PodReadyTimeout. Default 90; 0 turns the gate off.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MinPodsReadyPercent *int32 `json:"minPodsReadyPercent,omitempty"`

	// PodReadyTimeout is how long a pod on a new node may take to become
	// Ready before it counts against MinPodsReadyPercent. Default 5m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +optional
	PodReadyTimeout *metav1.Duration `json:"podReadyTimeout,omitempty"`
}

// RolloutPlanList is a list of RolloutPlans.
// +kubebuilder:object:root=true
type RolloutPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RolloutPlan `json:"items"`
}

// Annotations a person (through `karpgate rollout`) sets on a plan to ask
// for a one-off action; each holds the RFC 3339 instant of the request, and
// the plan's status records the last one handled, as Flux's
// reconcile.fluxcd.io/requestedAt does.
const (
	// AbortAnnotation asks the plan to stop: the rolling wave is held
	// too, and nothing is released until a person lifts the holds
	// (`karpgate resume`) or resumes the plan.
	AbortAnnotation = "karpgate.io/rollout-abort"
	// RetryAnnotation asks a failed or aborted plan to roll its wave
	// again, judging only NodeClaims launched after the request.
	RetryAnnotation = "karpgate.io/rollout-retry"
)
