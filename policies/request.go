package policies

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Operation is the admission operation under review; offline evaluation
// leaves it empty.
type Operation string

// The admission operations rules can see.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Request is one object to evaluate.
type Request struct {
	// Object is the object as unstructured JSON values (what
	// manifest.Object.Content and an admission request's object decode to).
	Object map[string]any
	// OldObject is the object before an UPDATE, nil otherwise.
	OldObject map[string]any
	Operation Operation
	// Point selects the configured actions; empty means config.CI.
	Point config.EnforcementPoint
	// MutationsOnly evaluates only the rules that declare custom.mutates, at
	// the admission point: what the mutating webhook needs.
	MutationsOnly bool
	// Inventory holds the other objects of an offline input for rules that
	// look across objects; nil at admission, where those rules stay quiet.
	Inventory *Inventory
}

// Inventory indexes the objects of one input for cross-object rules. It is
// converted to Rego's representation once and shared by every request of
// the run, so giving each object the whole input costs nothing per object.
//
// Rules see it as input.inventory:
//
//	objects: {<kind>: {<name>: <object>}}
//	nodePoolsByNodeClass: {<EC2NodeClass name>: [<NodePool name>, ...]}
type Inventory struct {
	value ast.Value
}

// NewInventory indexes objects; when two share a kind and name the first wins.
func NewInventory(objects []map[string]any) (*Inventory, error) {
	byKind := map[string]any{}
	byNodeClass := map[string]any{}
	for _, o := range objects {
		kind, _ := o["kind"].(string)
		metadata, _ := o["metadata"].(map[string]any)
		name, _ := metadata["name"].(string)
		if kind == "" || name == "" {
			continue
		}
		names, _ := byKind[kind].(map[string]any)
		if names == nil {
			names = map[string]any{}
			byKind[kind] = names
		}
		if _, seen := names[name]; seen {
			continue
		}
		names[name] = o
		if kind == karpenter.KindNodePool {
			if ref := nodeClassName(o); ref != "" {
				pools, _ := byNodeClass[ref].([]any)
				byNodeClass[ref] = append(pools, name)
			}
		}
	}
	v, err := ast.InterfaceToValue(map[string]any{"objects": byKind, "nodePoolsByNodeClass": byNodeClass})
	if err != nil {
		return nil, err
	}
	return &Inventory{value: v}, nil
}

func nodeClassName(nodePool map[string]any) string {
	name, _, _ := unstructured.NestedString(nodePool, "spec", "template", "spec", "nodeClassRef", "name")
	return name
}
