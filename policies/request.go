package policies

import (
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/config"
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
	// Stored judges an object nobody is writing, for the audit of stored
	// objects: the cross-object rules and the rules about a request are
	// left out (see Rule.JudgesStoredObjects); the audit evaluates the
	// former with EvaluateCrossObject.
	Stored bool
	// SkipCrossObject leaves out the rules that read input.inventory: lint
	// evaluates them with EvaluateCrossObject once the whole input is read.
	SkipCrossObject bool
	// Now is the instant time-dependent rules (budget windows) judge by;
	// zero means the engine's clock. A lint run judges every object as of
	// one instant.
	Now time.Time
	// UserInfo is who makes an admission request, as the API server
	// authenticated them; nil offline. Rules see it as input.userInfo.
	UserInfo *UserInfo
}

// UserInfo is the user of an admission request.
type UserInfo struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// SchemaViolation is one reason the API server would refuse the object,
// found offline by lint's CRD schema stage; the rules under rules/schema/
// report them (Engine.ReportSchema), each rule one class, and see them in
// input.schema.
type SchemaViolation struct {
	// Class is the kind of problem; each rule under rules/schema/ reports
	// one: required, type, enum, pattern, bounds, rule, unknownField,
	// metadata, list, other.
	Class   string `json:"class"`
	Path    string `json:"path"`
	Message string `json:"message"`
	// Fix is "" when the rule's own fix applies.
	Fix string `json:"fix"`
}

// Inventory indexes the objects of one input for cross-object rules. It is
// converted to Rego's representation once and shared by every request of
// the run, so giving each object the whole input costs nothing per object.
// Build one with Engine.NewInventoryBuilder.
//
// Rules see it as input.inventory:
//
//	objects: {<kind>: {<name>: <object>}}
//	nodePoolsByNodeClass: {<EC2NodeClass name>: [<NodePool name>, ...]}
//
// The objects are reduced to the fields the built-in cross-object rules
// read, unless a --policy rule reads the inventory; see crossobject.go.
type Inventory struct {
	value ast.Value
}

func nodeClassName(nodePool map[string]any) string {
	name, _, _ := unstructured.NestedString(nodePool, "spec", "template", "spec", "nodeClassRef", "name")
	return name
}

func schemaValue(vs []SchemaViolation) (ast.Value, error) {
	items := make([]any, len(vs))
	for i, v := range vs {
		items[i] = map[string]any{"class": v.Class, "path": v.Path, "message": v.Message, "fix": v.Fix}
	}
	return ast.InterfaceToValue(items)
}
