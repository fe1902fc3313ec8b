package state

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pod is the part of a core/v1 Pod that decides whether Karpenter may
// disrupt its node: where it runs, its labels (PodDisruptionBudgets select
// on them), its karpenter.sh/do-not-disrupt annotation, the owners that make
// it need no rescheduling (DaemonSet, Node), whether it is still active, and
// whether it tolerates Karpenter's disrupted taint. A whole Pod is over a
// kilobyte of Go structs before its strings; this view is a fifth of that.
type Pod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodSpec   `json:"spec"`
	Status            PodStatus `json:"status,omitempty"`
}

// PodSpec keeps the node and the tolerations.
type PodSpec struct {
	NodeName    string              `json:"nodeName,omitempty"`
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// PodStatus keeps the phase, the start time (a do-not-disrupt duration
// counts from it) and the Ready condition.
type PodStatus struct {
	Phase      corev1.PodPhase `json:"phase,omitempty"`
	StartTime  *metav1.Time    `json:"startTime,omitempty"`
	Conditions []PodCondition  `json:"conditions,omitempty"`
}

// PodCondition is a pod condition's type and status.
type PodCondition struct {
	Type   corev1.PodConditionType `json:"type"`
	Status corev1.ConditionStatus  `json:"status"`
}

// PodList is a list of Pods.
type PodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pod `json:"items"`
}

// Key is "namespace/name".
func (p *Pod) Key() string { return p.Namespace + "/" + p.Name }

// PodDisruptionBudget is the part of a policy/v1 PodDisruptionBudget that
// decides evictions: its selector and how many disruptions it allows now,
// with the numbers behind that for people.
type PodDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodDisruptionBudgetSpec   `json:"spec"`
	Status            PodDisruptionBudgetStatus `json:"status,omitempty"`
}

// PodDisruptionBudgetSpec is spec of a PodDisruptionBudget.
type PodDisruptionBudgetSpec struct {
	Selector                   *metav1.LabelSelector `json:"selector,omitempty"`
	MinAvailable               *intstr.IntOrString   `json:"minAvailable,omitempty"`
	MaxUnavailable             *intstr.IntOrString   `json:"maxUnavailable,omitempty"`
	UnhealthyPodEvictionPolicy *string               `json:"unhealthyPodEvictionPolicy,omitempty"`
}

// PodDisruptionBudgetStatus is status of a PodDisruptionBudget, as the
// disruption controller writes it.
type PodDisruptionBudgetStatus struct {
	DisruptionsAllowed int32 `json:"disruptionsAllowed"`
	CurrentHealthy     int32 `json:"currentHealthy"`
	DesiredHealthy     int32 `json:"desiredHealthy"`
	ExpectedPods       int32 `json:"expectedPods"`
}

// PodDisruptionBudgetList is a list of PodDisruptionBudgets.
type PodDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodDisruptionBudget `json:"items"`
}

// Key is "namespace/name".
func (b *PodDisruptionBudget) Key() string { return b.Namespace + "/" + b.Name }

// PDBsByNamespace holds PodDisruptionBudgets by namespace: a budget only
// ever selects pods of its own namespace.
type PDBsByNamespace map[string][]*PodDisruptionBudget

// GroupPDBs indexes budgets by namespace.
func GroupPDBs(pdbs []*PodDisruptionBudget) PDBsByNamespace {
	out := PDBsByNamespace{}
	for _, b := range pdbs {
		out[b.Namespace] = append(out[b.Namespace], b)
	}
	return out
}
