package state

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The deep copies caches and clients need, written out because the types
// are small and the project runs no code generator.

// DeepCopyInto copies p into out.
func (p *NodePool) DeepCopyInto(out *NodePool) {
	*out = *p
	out.TypeMeta = p.TypeMeta
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if p.Spec.Replicas != nil {
		n := *p.Spec.Replicas
		out.Spec.Replicas = &n
	}
	if p.Spec.Limits.Nodes != nil {
		q := p.Spec.Limits.Nodes.DeepCopy()
		out.Spec.Limits.Nodes = &q
	}
	if p.Spec.Disruption.Budgets != nil {
		out.Spec.Disruption.Budgets = make([]any, len(p.Spec.Disruption.Budgets))
		for i, b := range p.Spec.Disruption.Budgets {
			out.Spec.Disruption.Budgets[i] = runtime.DeepCopyJSONValue(b)
		}
	}
	if p.Status.Conditions != nil {
		out.Status.Conditions = append([]Condition(nil), p.Status.Conditions...)
	}
}

// DeepCopy returns a copy of p.
func (p *NodePool) DeepCopy() *NodePool {
	if p == nil {
		return nil
	}
	out := new(NodePool)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *NodePool) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *NodePoolList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &NodePoolList{TypeMeta: l.TypeMeta, Items: copyItems(l.Items)}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	return out
}

// DeepCopyInto copies c into out.
func (c *NodeClaim) DeepCopyInto(out *NodeClaim) {
	*out = *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if c.Spec.TerminationGracePeriod != nil {
		d := *c.Spec.TerminationGracePeriod
		out.Spec.TerminationGracePeriod = &d
	}
	if c.Status.Conditions != nil {
		out.Status.Conditions = make([]Condition, len(c.Status.Conditions))
		for i := range c.Status.Conditions {
			out.Status.Conditions[i] = c.Status.Conditions[i]
			c.Status.Conditions[i].LastTransitionTime.DeepCopyInto(&out.Status.Conditions[i].LastTransitionTime)
		}
	}
}

// DeepCopy returns a copy of c.
func (c *NodeClaim) DeepCopy() *NodeClaim {
	if c == nil {
		return nil
	}
	out := new(NodeClaim)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (c *NodeClaim) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *NodeClaimList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &NodeClaimList{TypeMeta: l.TypeMeta, Items: copyItems(l.Items)}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	return out
}

// DeepCopyInto copies c into out.
func (c *EC2NodeClass) DeepCopyInto(out *EC2NodeClass) {
	*out = *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if c.Status.AMIs != nil {
		out.Status.AMIs = make([]AMI, len(c.Status.AMIs))
		for i, ami := range c.Status.AMIs {
			out.Status.AMIs[i] = ami
			if ami.Requirements != nil {
				out.Status.AMIs[i].Requirements = make([]corev1.NodeSelectorRequirement, len(ami.Requirements))
				for j := range ami.Requirements {
					ami.Requirements[j].DeepCopyInto(&out.Status.AMIs[i].Requirements[j])
				}
			}
		}
	}
}

// DeepCopy returns a copy of c.
func (c *EC2NodeClass) DeepCopy() *EC2NodeClass {
	if c == nil {
		return nil
	}
	out := new(EC2NodeClass)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (c *EC2NodeClass) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *EC2NodeClassList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &EC2NodeClassList{TypeMeta: l.TypeMeta, Items: copyItems(l.Items)}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	return out
}

// copyItems deep-copies a list's items, keeping nil apart from empty.
func copyItems[T any, P interface {
	*T
	DeepCopyInto(*T)
}](items []T) []T {
	if items == nil {
		return nil
	}
	out := make([]T, len(items))
	for i := range items {
		P(&items[i]).DeepCopyInto(&out[i])
	}
	return out
}
