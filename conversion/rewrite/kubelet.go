package rewrite

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/conversion/kubeletplan"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
)

// kubeletPath is where a v1beta1 NodePool kept its kubelet block.
const kubeletPath = "spec.template.spec.kubelet"

// placeKubelets moves every NodePool's kubelet block into its EC2NodeClass,
// as kubeletplan decides: NodePools sharing an EC2NodeClass with different
// blocks split it into copies named <EC2NodeClass>-<first NodePool>, and
// those NodePools are repointed.
func (r *Result) placeKubelets(objects []*object) error {
	classes := map[string]*object{}
	pools := map[string][]*object{}
	var known []kubeletplan.Class
	var inputs []kubeletplan.Pool
	for _, o := range objects {
		if o.kind.Kind == karpenter.KindEC2NodeClass {
			if classes[o.name()] == nil {
				classes[o.name()] = o
			}
			kubelet, _, _ := unstructured.NestedMap(o.after, "spec", "kubelet")
			known = append(known, kubeletplan.Class{Name: o.name(), Kubelet: kubelet})
		}
	}
	for _, o := range objects {
		if o.kind.Kind != karpenter.KindNodePool {
			continue
		}
		if p, ok := r.poolOf(o); ok {
			inputs = append(inputs, p)
			pools[o.name()] = append(pools[o.name()], o)
		}
	}
	for _, plan := range kubeletplan.Plan(inputs, known) {
		if err := r.apply(plan, classes[plan.Class], pools); err != nil {
			return err
		}
	}
	return nil
}

// poolOf reads a NodePool's own kubelet and EC2NodeClass; ok is false when
// it has no EC2NodeClass reference or its annotation cannot be read.
func (r *Result) poolOf(o *object) (kubeletplan.Pool, bool) {
	raw, hasKubelet := annotation(o.after, karpenter.KubeletCompatibilityAnnotation)
	ref, _, _ := unstructured.NestedMap(o.after, "spec", "template", "spec", "nodeClassRef")
	group, _ := ref["group"].(string)
	kind, _ := ref["kind"].(string)
	class, _ := ref["name"].(string)
	if group != karpenter.DefaultNodeClassGroup || kind != karpenter.DefaultNodeClassKind || class == "" {
		if hasKubelet {
			keepInAnnotation(o)
			r.note(o, "", "kubelet stays in annotation "+karpenter.KubeletCompatibilityAnnotation+": the NodePool does not name an EC2NodeClass")
		}
		return kubeletplan.Pool{}, false
	}
	p := kubeletplan.Pool{Name: o.name(), Class: class}
	if hasKubelet {
		kubelet, err := conversion.DecodeObject([]byte(raw))
		if err != nil {
			keepInAnnotation(o)
			r.note(o, "", fmt.Sprintf("kubelet stays in annotation %s: it is not a JSON object: %v", karpenter.KubeletCompatibilityAnnotation, err))
			return kubeletplan.Pool{}, false
		}
		p.Kubelet = kubelet
	}
	return p, true
}

// apply carries out the plan for one EC2NodeClass on the objects.
func (r *Result) apply(plan kubeletplan.ClassPlan, class *object, pools map[string][]*object) error {
	each := func(names []string, do func(*object) error) error {
		for _, n := range names {
			for _, o := range pools[n] {
				if err := do(o); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if plan.Missing {
		return each(plan.Stay, func(o *object) error {
			keepInAnnotation(o)
			r.note(o, "", fmt.Sprintf("kubelet stays in annotation %s: EC2NodeClass %s is not among the inputs; convert them together to move it into its spec.kubelet", karpenter.KubeletCompatibilityAnnotation, plan.Class))
			return nil
		})
	}
	if plan.SetKubelet != nil {
		if err := setNested(class, class.editable(), runtime.DeepCopyJSON(plan.SetKubelet), "spec", "kubelet"); err != nil {
			return err
		}
		class.borrow("spec.kubelet", pools[plan.SetFrom][0])
		class.message("spec.kubelet", "set spec.kubelet from NodePool "+strings.Join(plan.Keepers, ", "))
		r.note(class, "", "spec.kubelet is new: NodePools outside these inputs that use this EC2NodeClass run with it too, and their nodes will drift")
	}
	if err := each(plan.Move, func(o *object) error { r.moveKubelet(o, plan.Class); return nil }); err != nil {
		return err
	}
	for _, c := range plan.Copies {
		if err := r.splitCopy(class, c, pools[c.From][0]); err != nil {
			return err
		}
		err := each(c.Pools, func(o *object) error {
			if err := setNested(o, o.editable(), c.Name, "spec", "template", "spec", "nodeClassRef", "name"); err != nil {
				return err
			}
			o.message("spec.template.spec.nodeClassRef.name", fmt.Sprintf("nodeClassRef.name: %s -> %s (a copy of %s with this NodePool's kubelet)", plan.Class, c.Name, plan.Class))
			r.moveKubelet(o, c.Name)
			r.Drifts = append(r.Drifts, Drift{NodePool: o.name(), Reason: fmt.Sprintf("nodeClassRef now names EC2NodeClass %s, split from %s because the NodePools using it have different kubelet blocks", c.Name, plan.Class)})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// moveKubelet drops a NodePool's kubelet annotation once its EC2NodeClass
// carries the same block.
func (r *Result) moveKubelet(o *object, class string) {
	deleteAnnotation(o.editable(), karpenter.KubeletCompatibilityAnnotation)
	text := fmt.Sprintf("moved %s to EC2NodeClass/%s spec.kubelet", kubeletPath, class)
	o.message(kubeletPath, text)
	o.message("metadata.annotations["+karpenter.KubeletCompatibilityAnnotation+"]", text)
	r.note(o, "", fmt.Sprintf("if the live NodePool carries annotation %s (Karpenter's conversion adds it), remove it after applying: Karpenter prefers it over EC2NodeClass spec.kubelet", karpenter.KubeletCompatibilityAnnotation))
}

// keepInAnnotation words the move of a kubelet block that could not reach
// an EC2NodeClass: Karpenter reads it from the annotation.
func keepInAnnotation(o *object) {
	text := fmt.Sprintf("moved %s to annotation %s, where Karpenter v1 reads it", kubeletPath, karpenter.KubeletCompatibilityAnnotation)
	o.message(kubeletPath, text)
	o.message("metadata.annotations["+karpenter.KubeletCompatibilityAnnotation+"]", text)
}

// splitCopy adds the copy c of class as a new document after class's; from
// is the NodePool whose kubelet block it holds.
func (r *Result) splitCopy(class *object, c kubeletplan.Copy, from *object) error {
	o := &object{doc: class.doc, kind: class.kind, version: karpenter.V1, copyOf: class, owned: true, before: class.after}
	o.after = runtime.DeepCopyJSON(class.after)
	if err := setNested(class, o.after, c.Name, "metadata", "name"); err != nil {
		return err
	}
	for _, server := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(o.after, "metadata", server)
	}
	delete(o.after, "status")
	if err := setNested(class, o.after, runtime.DeepCopyJSON(c.Kubelet), "spec", "kubelet"); err != nil {
		return err
	}
	o.borrow("spec.kubelet", from)
	o.message("", fmt.Sprintf("new: a copy of EC2NodeClass/%s with the kubelet of NodePool %s", class.name(), strings.Join(c.Pools, ", ")))
	class.doc.inserts = append(class.doc.inserts, o)
	return nil
}

// setNested sets a nested field of content, an edited copy of o. It fails
// when a field on the way is not an object (a hand-written `spec: []`,
// say): the kubelet would otherwise leave its NodePool and land nowhere.
func setNested(o *object, content map[string]any, value any, path ...string) error {
	if err := unstructured.SetNestedField(content, value, path...); err != nil {
		return fmt.Errorf("%s:%d: %s %s: cannot set %s: %w; fix the object's shape and convert again",
			manifest.DisplayName(o.src.Source), o.src.Node.Line, o.kind.Kind, o.name(), strings.Join(path, "."), err)
	}
	return nil
}

// borrow makes the added field at path reuse the kubelet block as written in
// the v1beta1 NodePool from, with its comments and order.
func (o *object) borrow(path string, from *object) {
	if from.src == nil || from.version != karpenter.V1Beta1 {
		return
	}
	parent, err := walkTo(from.src.Node, []any{"spec", "template", "spec"})
	if err != nil {
		return
	}
	pair, ok := entry(parent, "kubelet")
	if !ok {
		return
	}
	if o.borrowed == nil {
		o.borrowed = map[string]nodePair{}
	}
	o.borrowed[path] = nodePair{key: cloneNode(pair.key), value: cloneNode(pair.value)}
}

func (o *object) message(path, text string) {
	if o.messages == nil {
		o.messages = map[string]string{}
	}
	o.messages[path] = text
}
