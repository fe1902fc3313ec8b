package state

import (
	"unique"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// A cluster has a hundred thousand pods and a few thousand distinct label
// keys and values: every pod decoded from the wire carries its own copies.
// Pods are the bulk of the loop's cache, so their trim interns namespaces
// and labels (one copy per distinct string, released when no pod holds it).
func intern(s string) string { return unique.Make(s).Value() }

// DisruptedTaint is the taint Karpenter puts on a node it is disrupting.
// A pod that tolerates it is not evicted (Karpenter leaves it be), so no PDB
// stops the node's drain on its account.
var DisruptedTaint = corev1.Taint{Key: karpenter.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}

// ToleratesDisrupted reports whether a toleration tolerates DisruptedTaint.
func ToleratesDisrupted(t corev1.Toleration) bool {
	return t.ToleratesTaint(logr.Discard(), &DisruptedTaint, false)
}

func trimPod(p *Pod) {
	m := &p.ObjectMeta
	owners, labels := m.OwnerReferences, m.Labels
	trimMeta(m, isDoNotDisrupt, nil)
	// PodDisruptionBudgets select on any label, so all are kept, interned.
	m.Labels = internLabels(labels)
	m.UID = ""
	m.Namespace = intern(m.Namespace)
	m.OwnerReferences = keepOwners(owners)
	p.Spec.NodeName = intern(p.Spec.NodeName)
	var tolerations []corev1.Toleration
	for _, t := range p.Spec.Tolerations {
		if ToleratesDisrupted(t) {
			tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect})
		}
	}
	p.Spec.Tolerations = tolerations
	if v, ok := p.Annotations[karpenter.DoNotDisruptAnnotation]; !ok || v == "true" {
		// Only a do-not-disrupt duration counts from the start time.
		p.Status.StartTime = nil
	}
	var ready []PodCondition
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = append(ready, c)
		}
	}
	p.Status.Conditions = ready
}

// keepOwners keeps the owners that make a pod need no rescheduling, or that
// Karpenter treats apart (StatefulSet pods), as kind and API version only.
func keepOwners(in []metav1.OwnerReference) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, o := range in {
		switch {
		case o.APIVersion == karpenter.OwnerDaemonSetAPIVersion && o.Kind == karpenter.OwnerDaemonSetKind,
			o.APIVersion == karpenter.OwnerStatefulSetAPIVersion && o.Kind == karpenter.OwnerStatefulSetKind,
			o.APIVersion == karpenter.OwnerNodeAPIVersion && o.Kind == karpenter.OwnerNodeKind:
			out = append(out, metav1.OwnerReference{APIVersion: intern(o.APIVersion), Kind: intern(o.Kind)})
		}
	}
	return out
}

// internLabels returns a fresh map with interned keys and values.
func internLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[intern(k)] = intern(v)
	}
	return out
}

func trimPDB(b *PodDisruptionBudget) {
	trimMeta(&b.ObjectMeta, nil, nil)
	b.UID = ""
}
