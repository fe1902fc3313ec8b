package manifests

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
)

// kubeletPath is where a v1beta1 NodePool kept its kubelet block.
const kubeletPath = "spec.template.spec.kubelet"

// pool is a NodePool with the kubelet block it runs with: its own from the
// compatibility annotation, or, without one, its EC2NodeClass's.
type pool struct {
	o       *object
	kubelet map[string]any // nil: none of its own
	key     string         // canonical JSON of the kubelet it runs with
}

// kubeletGroup is the NodePools of one EC2NodeClass that run one kubelet.
type kubeletGroup struct {
	key   string
	pools []*pool
}

func (g *kubeletGroup) own() *pool {
	for _, p := range g.pools {
		if p.kubelet != nil {
			return p
		}
	}
	return nil
}

func (g *kubeletGroup) names() string {
	names := make([]string, len(g.pools))
	for i, p := range g.pools {
		names[i] = p.o.name()
	}
	return strings.Join(names, ", ")
}

// placeKubelets moves every NodePool's kubelet block into its EC2NodeClass.
// NodePools sharing an EC2NodeClass with different blocks split it: the
// NodePools that already run with the EC2NodeClass's kubelet (or, failing
// those, the group of the alphabetically first NodePool) keep it, every other
// group gets a copy named <EC2NodeClass>-<first NodePool> and is repointed.
func (r *Result) placeKubelets(objects []*object) error {
	classes := map[string]*object{}
	taken := map[string]bool{}
	byClass := map[string][]*pool{}
	var classOrder []string
	for _, o := range objects {
		if o.kind.Kind == karpenter.KindEC2NodeClass {
			taken[o.name()] = true
			if classes[o.name()] == nil {
				classes[o.name()] = o
			}
		}
	}
	for _, o := range objects {
		if o.kind.Kind != karpenter.KindNodePool {
			continue
		}
		p, class := r.poolOf(o)
		if p == nil {
			continue
		}
		if byClass[class] == nil {
			classOrder = append(classOrder, class)
		}
		byClass[class] = append(byClass[class], p)
	}
	for _, name := range classOrder {
		if err := r.placeForClass(name, classes[name], byClass[name], taken); err != nil {
			return err
		}
	}
	return nil
}

// poolOf reads a NodePool's own kubelet and EC2NodeClass; nil when it has
// no EC2NodeClass reference or its annotation cannot be read.
func (r *Result) poolOf(o *object) (*pool, string) {
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
		return nil, ""
	}
	p := &pool{o: o}
	if hasKubelet {
		kubelet, err := conversion.DecodeObject([]byte(raw))
		if err != nil {
			keepInAnnotation(o)
			r.note(o, "", fmt.Sprintf("kubelet stays in annotation %s: it is not a JSON object: %v", karpenter.KubeletCompatibilityAnnotation, err))
			return nil, ""
		}
		p.kubelet = kubelet
	}
	return p, class
}

func (r *Result) placeForClass(name string, class *object, pools []*pool, taken map[string]bool) error {
	anyOwn := false
	for _, p := range pools {
		anyOwn = anyOwn || p.kubelet != nil
	}
	if !anyOwn {
		return nil
	}
	if class == nil {
		for _, p := range pools {
			if p.kubelet != nil {
				keepInAnnotation(p.o)
				r.note(p.o, "", fmt.Sprintf("kubelet stays in annotation %s: EC2NodeClass %s is not among the inputs; convert them together to move it into its spec.kubelet", karpenter.KubeletCompatibilityAnnotation, name))
			}
		}
		return nil
	}
	base, _, _ := unstructured.NestedMap(class.after, "spec", "kubelet")
	baseKey := canonical(base)
	groups := map[string]*kubeletGroup{}
	var order []*kubeletGroup
	sort.Slice(pools, func(i, j int) bool { return pools[i].o.name() < pools[j].o.name() })
	for _, p := range pools {
		p.key = baseKey
		if p.kubelet != nil {
			p.key = canonical(p.kubelet)
		}
		g := groups[p.key]
		if g == nil {
			g = &kubeletGroup{key: p.key}
			groups[p.key] = g
			order = append(order, g)
		}
		g.pools = append(g.pools, p)
	}
	keeper := order[0]
	if g, ok := groups[baseKey]; ok {
		keeper = g
	}
	if keeper.key != baseKey {
		from := keeper.own()
		if err := setNested(class, class.editable(), runtime.DeepCopyJSON(from.kubelet), "spec", "kubelet"); err != nil {
			return err
		}
		class.borrow("spec.kubelet", from.o)
		class.message("spec.kubelet", "set spec.kubelet from NodePool "+keeper.names())
		r.note(class, "", "spec.kubelet is new: NodePools outside these inputs that use this EC2NodeClass run with it too, and their nodes will drift")
	}
	for _, p := range keeper.pools {
		if p.kubelet != nil {
			r.moveKubelet(p, name)
		}
	}
	for _, g := range order {
		if g == keeper {
			continue
		}
		copyName := uniqueName(name+"-"+g.pools[0].o.name(), g.key, taken)
		if err := r.splitCopy(class, copyName, g); err != nil {
			return err
		}
		for _, p := range g.pools {
			if err := setNested(p.o, p.o.editable(), copyName, "spec", "template", "spec", "nodeClassRef", "name"); err != nil {
				return err
			}
			p.o.message("spec.template.spec.nodeClassRef.name", fmt.Sprintf("nodeClassRef.name: %s -> %s (a copy of %s with this NodePool's kubelet)", name, copyName, name))
			r.moveKubelet(p, copyName)
			r.Drifts = append(r.Drifts, Drift{NodePool: p.o.name(), Reason: fmt.Sprintf("nodeClassRef now names EC2NodeClass %s, split from %s because the NodePools using it have different kubelet blocks", copyName, name)})
		}
	}
	return nil
}

// moveKubelet drops a NodePool's kubelet annotation once its EC2NodeClass
// carries the same block.
func (r *Result) moveKubelet(p *pool, class string) {
	deleteAnnotation(p.o.editable(), karpenter.KubeletCompatibilityAnnotation)
	text := fmt.Sprintf("moved %s to EC2NodeClass/%s spec.kubelet", kubeletPath, class)
	p.o.message(kubeletPath, text)
	p.o.message("metadata.annotations["+karpenter.KubeletCompatibilityAnnotation+"]", text)
	r.note(p.o, "", fmt.Sprintf("if the live NodePool carries annotation %s (Karpenter's conversion adds it), remove it after applying: Karpenter prefers it over EC2NodeClass spec.kubelet", karpenter.KubeletCompatibilityAnnotation))
}

// keepInAnnotation words the move of a kubelet block that could not reach
// an EC2NodeClass: Karpenter reads it from the annotation.
func keepInAnnotation(o *object) {
	text := fmt.Sprintf("moved %s to annotation %s, where Karpenter v1 reads it", kubeletPath, karpenter.KubeletCompatibilityAnnotation)
	o.message(kubeletPath, text)
	o.message("metadata.annotations["+karpenter.KubeletCompatibilityAnnotation+"]", text)
}

// splitCopy adds a copy of class named name, with the kubelet of group g,
// as a new document after class's.
func (r *Result) splitCopy(class *object, name string, g *kubeletGroup) error {
	from := g.own()
	c := &object{doc: class.doc, kind: class.kind, version: karpenter.V1, copyOf: class, owned: true, before: class.after}
	c.after = runtime.DeepCopyJSON(class.after)
	if err := setNested(class, c.after, name, "metadata", "name"); err != nil {
		return err
	}
	for _, server := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(c.after, "metadata", server)
	}
	delete(c.after, "status")
	if err := setNested(class, c.after, runtime.DeepCopyJSON(from.kubelet), "spec", "kubelet"); err != nil {
		return err
	}
	c.borrow("spec.kubelet", from.o)
	c.message("", fmt.Sprintf("new: a copy of EC2NodeClass/%s with the kubelet of NodePool %s", class.name(), g.names()))
	class.doc.inserts = append(class.doc.inserts, c)
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

func canonical(m map[string]any) string {
	if m == nil {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// uniqueName returns want, or want with a short hash of the kubelet block
// when an EC2NodeClass of that name exists already.
func uniqueName(want, kubeletKey string, taken map[string]bool) string {
	name := want
	for i := 0; taken[name]; i++ {
		name = fmt.Sprintf("%s-%s", want, shortHash(fmt.Sprint(kubeletKey, i)))
	}
	taken[name] = true
	return name
}
