package kubeletfix

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/conversion/kubeletplan"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// Plan is where every annotation-held kubelet block of a snapshot goes.
type Plan struct {
	Classes []kubeletplan.ClassPlan
	// Unplaced are NodePools carrying the annotation that no plan can
	// place, with the reason.
	Unplaced []Unplaced
	// NodeClaims counts each NodePool's NodeClaims: the nodes a drift
	// replaces.
	NodeClaims map[string]int
	// Pools and Classes by name, as read.
	Pools       map[string]snapshot.Object
	ClassByName map[string]snapshot.Object
	// Beta names the NodePools read as v1beta1 (files only: a cluster is
	// read at v1), whose block is still spec.template.spec.kubelet.
	Beta map[string]bool
}

// Unplaced is a NodePool whose block has no EC2NodeClass to go to.
type Unplaced struct {
	Pool   snapshot.Object
	Reason string
}

// PlanFor plans the move for the v1 NodePools and EC2NodeClasses of s.
func PlanFor(s *snapshot.Snapshot) Plan {
	p := Plan{NodeClaims: map[string]int{}, Pools: map[string]snapshot.Object{}, ClassByName: map[string]snapshot.Object{}, Beta: map[string]bool{}}
	var classes []kubeletplan.Class
	for _, c := range s.EC2NodeClasses() {
		if version(c) != karpenter.V1 {
			continue
		}
		kubelet, _, _ := unstructured.NestedMap(c.Content, "spec", "kubelet")
		classes = append(classes, kubeletplan.Class{Name: c.Name(), Kubelet: kubelet})
		if _, ok := p.ClassByName[c.Name()]; !ok {
			p.ClassByName[c.Name()] = c
		}
	}
	for _, nc := range s.NodeClaims() {
		if pool, found, _ := unstructured.NestedString(nc.Content, "metadata", "labels", karpenter.NodePoolLabel); found {
			p.NodeClaims[pool]++
		}
	}
	var pools []kubeletplan.Pool
	for _, o := range s.NodePools() {
		p.Pools[o.Name()] = o
		pool, reason, ok := poolOf(o)
		if version(o) == karpenter.V1Beta1 {
			p.Beta[o.Name()] = true
			pool, reason, ok = betaPoolOf(o)
		}
		switch {
		case reason != "":
			p.Unplaced = append(p.Unplaced, Unplaced{Pool: o, Reason: reason})
		case ok:
			pools = append(pools, pool)
		}
	}
	sort.Slice(p.Unplaced, func(i, j int) bool { return p.Unplaced[i].Pool.Name() < p.Unplaced[j].Pool.Name() })
	p.Classes = kubeletplan.Plan(pools, classes)
	return p
}

func version(o snapshot.Object) string {
	_, v, _ := karpenter.LookupKind(o.APIVersion(), o.Kind())
	return v
}

// poolOf reads a v1 NodePool as a plan input. reason is set when it carries
// the annotation but cannot be planned; ok is false when it names no
// EC2NodeClass (and carries no annotation, so nothing is lost).
func poolOf(o snapshot.Object) (pool kubeletplan.Pool, reason string, ok bool) {
	raw, hasKubelet := o.Annotation(karpenter.KubeletCompatibilityAnnotation)
	ref, _, _ := unstructured.NestedMap(o.Content, "spec", "template", "spec", "nodeClassRef")
	group, _ := ref["group"].(string)
	kind, _ := ref["kind"].(string)
	class, _ := ref["name"].(string)
	if group != karpenter.DefaultNodeClassGroup || kind != karpenter.DefaultNodeClassKind || class == "" {
		if hasKubelet {
			return pool, fmt.Sprintf("its nodeClassRef names %s %q in group %q, not an EC2NodeClass", orEmpty(kind), class, group), false
		}
		return pool, "", false
	}
	pool = kubeletplan.Pool{Name: o.Name(), Class: class}
	if hasKubelet {
		kubelet, err := conversion.DecodeObject([]byte(raw))
		if err != nil {
			return pool, fmt.Sprintf("annotation %s is not a JSON object: %v", karpenter.KubeletCompatibilityAnnotation, err), false
		}
		pool.Kubelet = kubelet
	}
	return pool, "", true
}

// betaPoolOf reads a v1beta1 NodePool (in files) as a plan input: its
// reference names an EC2NodeClass when kind and the apiVersion's group are
// empty or Karpenter's defaults, as Karpenter's conversion reads them; its
// block is spec.template.spec.kubelet. It matters even without a block: it
// runs with its EC2NodeClass's kubelet, which a move must not change.
func betaPoolOf(o snapshot.Object) (pool kubeletplan.Pool, reason string, ok bool) {
	spec, _, _ := unstructured.NestedMap(o.Content, "spec", "template", "spec")
	ref, _ := spec["nodeClassRef"].(map[string]any)
	kind, _ := ref["kind"].(string)
	apiVersion, _ := ref["apiVersion"].(string)
	class, _ := ref["name"].(string)
	group, _, _ := strings.Cut(apiVersion, "/")
	kubelet, hasKubelet := spec["kubelet"].(map[string]any)
	if kind != "" && kind != karpenter.DefaultNodeClassKind || group != "" && group != karpenter.DefaultNodeClassGroup || class == "" {
		if hasKubelet {
			return pool, fmt.Sprintf("its nodeClassRef names %s %q in group %q, not an EC2NodeClass", orEmpty(kind), class, group), false
		}
		return pool, "", false
	}
	return kubeletplan.Pool{Name: o.Name(), Class: class, Kubelet: kubelet}, "", true
}

func orEmpty(s string) string {
	if s == "" {
		return "a kind"
	}
	return s
}

// Step is one change the fix makes, and the drift it causes.
type Step struct {
	// Object is "NodePool/a" or "EC2NodeClass/default".
	Object string
	Change string
	// Drift is the nodes the change replaces, or why it replaces none.
	Drift string
	// Replaces is how many NodeClaims the change makes drift.
	Replaces int
}

func nodeClaims(n int) string {
	if n == 1 {
		return "1 NodeClaim"
	}
	return fmt.Sprintf("%d NodeClaims", n)
}

func (s Step) String() string {
	return fmt.Sprintf("%s: %s. Drift: %s", s.Object, s.Change, s.Drift)
}

// blockGoes says how a NodePool's own block leaves it.
func (p Plan) blockGoes(pool string) string {
	if p.Beta[pool] {
		return "spec.template.spec.kubelet goes (karpgate convert moves it)"
	}
	return "annotation " + karpenter.KubeletCompatibilityAnnotation + " removed"
}

// Steps lists, in the order Apply makes them, the changes of a plan.
func (p Plan) Steps() []Step {
	var steps []Step
	for _, c := range p.Classes {
		if c.Missing {
			continue
		}
		if c.SetKubelet != nil {
			steps = append(steps, Step{
				Object: "EC2NodeClass/" + c.Class,
				Change: fmt.Sprintf("spec.kubelet set to %s, the block of NodePool %s", kubeletplan.Canonical(c.SetKubelet), c.SetFrom),
				Drift:  "none: no NodePool runs with its kubelet so far (they all carry their own block)",
			})
		}
		for _, cp := range c.Copies {
			steps = append(steps, Step{
				Object: "EC2NodeClass/" + cp.Name,
				Change: fmt.Sprintf("created as a copy of %s with spec.kubelet %s, the block of NodePool %s", c.Class, kubeletplan.Canonical(cp.Kubelet), cp.From),
				Drift:  "none by itself",
			})
		}
		for _, cp := range c.Copies {
			for _, name := range cp.Pools {
				n := p.NodeClaims[name]
				steps = append(steps, Step{
					Object:   "NodePool/" + name,
					Change:   fmt.Sprintf("nodeClassRef.name %s -> %s, %s", c.Class, cp.Name, p.blockGoes(name)),
					Drift:    fmt.Sprintf("every node of NodePool %s (%s now) is replaced: nodeClassRef is part of the NodePool's template hash (NodePoolDrifted), the price of a kubelet block its EC2NodeClass's other NodePools do not share", name, nodeClaims(n)),
					Replaces: n,
				})
			}
		}
		for _, name := range c.Move {
			steps = append(steps, Step{
				Object: "NodePool/" + name,
				Change: p.blockGoes(name),
				Drift:  fmt.Sprintf("none: EC2NodeClass/%s holds the same kubelet block, so the kubelet Karpenter hashes is unchanged", c.Class),
			})
		}
	}
	return steps
}
