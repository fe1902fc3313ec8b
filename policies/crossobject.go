package policies

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies/waiver"
)

// Cross-object rules read input.inventory: what the other objects of an
// offline input say (KG501, KG502). Lint streams its input, so it cannot
// keep every object until the last one is read; it evaluates every other
// rule as it goes and keeps, for these, only the fields they read: a
// Subject per object they apply to and an Inventory of all objects. Once
// the input is read, EvaluateCrossObject runs them.
//
// The fields are those the built-in cross-object rules read. When a rule of
// --policy reads input.inventory, nobody knows which fields it needs, so
// subjects and the inventory keep whole objects: correct, but the memory
// then grows with the input.

// subjectFields are what the built-in cross-object rules read of the object
// under evaluation (input.object); subjectPaths are the field paths their
// findings point at, whose positions lint keeps.
var (
	subjectFields = [][]string{
		{"apiVersion"}, {"kind"},
		{"metadata", "name"}, {"metadata", "namespace"},
		{"metadata", "annotations", karpenter.KubeletCompatibilityAnnotation},
		{"spec", "template", "spec", "nodeClassRef"},
		{"spec", "template", "spec", "kubelet"},
		{"spec", "nodeClassRef"},
	}
	subjectPaths = []string{
		"spec.template.spec.nodeClassRef.name",
		"spec.nodeClassRef.name",
		"spec.template.spec.kubelet",
		"metadata.annotations[" + karpenter.KubeletCompatibilityAnnotation + "]",
	}
	// inventoryFields are what they read of the other objects
	// (input.inventory.objects.<kind>.<name>).
	inventoryFields = [][]string{
		{"apiVersion"},
		{"metadata", "annotations", karpenter.KubeletCompatibilityAnnotation},
		{"spec", "template", "spec", "kubelet"},
	}
)

// CrossObjectPaths are the field paths a cross-object finding can point
// at, for callers that locate findings in files and cannot keep every
// object: a finding's path is one of these, or the object itself. nil means
// any path (a --policy rule reads input.inventory); keep whole objects.
func (e *Engine) CrossObjectPaths() []string {
	if e.wholeObjects {
		return nil
	}
	return subjectPaths
}

// IsCrossObject reports whether rule id reads input.inventory.
func (e *Engine) IsCrossObject(id string) bool {
	r, ok := e.catalog.Lookup(id)
	return ok && r.crossObject
}

// HasCrossObjectRules reports whether any enabled cross-object rule
// applies to objects of kind at point.
func (e *Engine) HasCrossObjectRules(kind string, point config.EnforcementPoint) bool {
	return e.crossKinds[point][kind]
}

// Subject is what the cross-object rules need of one object, kept after
// the rest of it is gone: the fields they read (as compact JSON until
// evaluation), its waivers and whether it is production.
type Subject struct {
	object     []byte
	ref        string
	waivers    []waiver.Waiver
	production bool
}

// NewSubject keeps what the cross-object rules need of object.
func (e *Engine) NewSubject(object map[string]any) (*Subject, error) {
	kept := object
	if !e.wholeObjects {
		kept = project(object, subjectFields)
	}
	raw, err := json.Marshal(kept)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", objectRef(object), err)
	}
	return &Subject{object: raw, ref: objectRef(object), waivers: readWaivers(object, e.now()), production: e.cfg.IsProduction(object)}, nil
}

// InventoryEntry is one object as the inventory keeps it. Making one is
// the costly part of indexing, so callers that read objects on several
// goroutines make entries there and add them in input order.
type InventoryEntry struct {
	kind, name, nodeClass string
	value                 ast.Value
	// text is value printed, which Add shares equal values by: printed
	// here, on the caller's goroutines, rather than in Add, which lint
	// calls on one goroutine in input order.
	text string
}

// NewInventoryEntry reduces object for the inventory. An object without a
// kind or a name gives an entry that Add ignores.
func (e *Engine) NewInventoryEntry(object map[string]any) (InventoryEntry, error) {
	kind, _ := object["kind"].(string)
	metadata, _ := object["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	if kind == "" || name == "" {
		return InventoryEntry{}, nil
	}
	kept := object
	if !e.wholeObjects {
		kept = project(object, inventoryFields)
	}
	v, err := ast.InterfaceToValue(kept)
	if err != nil {
		return InventoryEntry{}, fmt.Errorf("%s: %w", objectRef(object), err)
	}
	entry := InventoryEntry{kind: kind, name: name, value: v, text: v.String()}
	if kind == karpenter.KindNodePool {
		entry.nodeClass = nodeClassName(object)
	}
	return entry, nil
}

// Same reports whether two entries index the same object as the same
// reduced value: the audit of stored objects rebuilds the inventory, and
// judges the cross-object rules again, only when an entry changes.
func (e InventoryEntry) Same(o InventoryEntry) bool {
	return e.kind == o.kind && e.name == o.name && e.nodeClass == o.nodeClass && e.text == o.text
}

// InventoryBuilder indexes the objects of one input for the cross-object
// rules, one entry at a time; see Inventory for the shape rules see.
type InventoryBuilder struct {
	byKind      map[string]map[string]ast.Value
	byNodeClass map[string][]string
	// values holds one copy of each distinct reduced object: most objects
	// of an input reduce alike ({"apiVersion": "karpenter.sh/v1"}), and
	// sharing the copy is what keeps the index small.
	values map[string]ast.Value
}

// NewInventoryBuilder starts an empty inventory.
func NewInventoryBuilder() *InventoryBuilder {
	return &InventoryBuilder{byKind: map[string]map[string]ast.Value{}, byNodeClass: map[string][]string{}, values: map[string]ast.Value{}}
}

// Add indexes an entry; when two objects share a kind and a name, the
// first added wins.
func (b *InventoryBuilder) Add(entry InventoryEntry) {
	if entry.kind == "" || entry.name == "" {
		return
	}
	names := b.byKind[entry.kind]
	if names == nil {
		names = map[string]ast.Value{}
		b.byKind[entry.kind] = names
	}
	if _, seen := names[entry.name]; seen {
		return
	}
	v, shared := b.values[entry.text]
	if !shared {
		v = entry.value
		b.values[entry.text] = v
	}
	names[entry.name] = v
	if entry.nodeClass != "" {
		b.byNodeClass[entry.nodeClass] = append(b.byNodeClass[entry.nodeClass], entry.name)
	}
}

// Build returns the inventory of everything added.
func (b *InventoryBuilder) Build() *Inventory {
	objects := ast.NewObject()
	for kind, names := range b.byKind {
		byName := ast.NewObject()
		for name, v := range names {
			byName.Insert(ast.StringTerm(name), ast.NewTerm(v))
		}
		objects.Insert(ast.StringTerm(kind), ast.NewTerm(byName))
	}
	byNodeClass := ast.NewObject()
	for class, pools := range b.byNodeClass {
		terms := make([]*ast.Term, len(pools))
		for i, p := range pools {
			terms[i] = ast.StringTerm(p)
		}
		byNodeClass.Insert(ast.StringTerm(class), ast.ArrayTerm(terms...))
	}
	return &Inventory{value: ast.NewObject(
		ast.Item(ast.StringTerm("objects"), ast.NewTerm(objects)),
		ast.Item(ast.StringTerm("nodePoolsByNodeClass"), ast.NewTerm(byNodeClass)),
	)}
}

// EvaluateCrossObject runs the enabled cross-object rules on a subject at
// an enforcement point (lint's CI; admission for the audit of stored
// objects, the one place admission has every object), as of now (zero:
// the engine's clock).
func (e *Engine) EvaluateCrossObject(ctx context.Context, s *Subject, inventory *Inventory, now time.Time, point config.EnforcementPoint) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	object, err := ast.ValueFromReader(bytes.NewReader(s.object))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ref, err)
	}
	in := ast.NewObject(
		ast.Item(ast.StringTerm("object"), ast.NewTerm(object)),
		ast.Item(ast.StringTerm("operation"), ast.StringTerm("")),
		ast.Item(ast.StringTerm("enforcementPoint"), ast.StringTerm(string(point))),
		ast.Item(ast.StringTerm("production"), ast.BooleanTerm(s.production)),
		ast.Item(ast.StringTerm("objectProduction"), ast.BooleanTerm(s.production)),
		ast.Item(ast.StringTerm("inventory"), ast.NewTerm(inventory.value)),
	)
	if now.IsZero() {
		now = e.now()
	}
	vs, err := e.violations(ctx, e.queries.selections[selectCrossObject], in, now, s.ref)
	if err != nil {
		return nil, err
	}
	return e.result(vs, point, s.waivers)
}

// project keeps only the given field paths of object. A value on a path
// that is not an object is kept whole, so rules see the same type errors.
func project(object map[string]any, paths [][]string) map[string]any {
	out := map[string]any{}
	for _, path := range paths {
		keep(out, object, path)
	}
	return out
}

func keep(out, in map[string]any, path []string) {
	v, ok := in[path[0]]
	if !ok {
		return
	}
	child, isMap := v.(map[string]any)
	if len(path) == 1 || !isMap {
		out[path[0]] = v
		return
	}
	sub, _ := out[path[0]].(map[string]any)
	if sub == nil {
		sub = map[string]any{}
		out[path[0]] = sub
	}
	keep(sub, child, path[1:])
}
