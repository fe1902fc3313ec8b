package state

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies p into out.
func (p *Pod) DeepCopyInto(out *Pod) {
	*out = *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if p.Spec.Tolerations != nil {
		out.Spec.Tolerations = make([]corev1.Toleration, len(p.Spec.Tolerations))
		for i := range p.Spec.Tolerations {
			p.Spec.Tolerations[i].DeepCopyInto(&out.Spec.Tolerations[i])
		}
	}
	if p.Status.StartTime != nil {
		out.Status.StartTime = p.Status.StartTime.DeepCopy()
	}
	if p.Status.Conditions != nil {
		out.Status.Conditions = append([]PodCondition(nil), p.Status.Conditions...)
	}
}

// DeepCopy returns a copy of p.
func (p *Pod) DeepCopy() *Pod {
	if p == nil {
		return nil
	}
	out := new(Pod)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *Pod) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *PodList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &PodList{TypeMeta: l.TypeMeta, Items: copyItems(l.Items)}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	return out
}

// DeepCopyInto copies b into out.
func (b *PodDisruptionBudget) DeepCopyInto(out *PodDisruptionBudget) {
	*out = *b
	b.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Selector = b.Spec.Selector.DeepCopy()
	if b.Spec.MinAvailable != nil {
		v := *b.Spec.MinAvailable
		out.Spec.MinAvailable = &v
	}
	if b.Spec.MaxUnavailable != nil {
		v := *b.Spec.MaxUnavailable
		out.Spec.MaxUnavailable = &v
	}
	if b.Spec.UnhealthyPodEvictionPolicy != nil {
		v := *b.Spec.UnhealthyPodEvictionPolicy
		out.Spec.UnhealthyPodEvictionPolicy = &v
	}
}

// DeepCopy returns a copy of b.
func (b *PodDisruptionBudget) DeepCopy() *PodDisruptionBudget {
	if b == nil {
		return nil
	}
	out := new(PodDisruptionBudget)
	b.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (b *PodDisruptionBudget) DeepCopyObject() runtime.Object { return b.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *PodDisruptionBudgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &PodDisruptionBudgetList{TypeMeta: l.TypeMeta, Items: copyItems(l.Items)}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	return out
}
