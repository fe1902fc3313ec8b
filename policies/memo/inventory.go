package memo

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// ReadsInventory says whether the rules, or anything they depend on, read
// input.inventory (or all of input, which holds it): the engine evaluates
// such rules apart, once lint has indexed its whole input, and never
// memoizes them, since the inventory tells one input from another.
func ReadsInventory(c *ast.Compiler, rules []*ast.Rule) bool {
	return !everyRuleUsed(c, rules, func(r *ast.Rule) bool { return !ruleReadsInventory(r) })
}

// everyRuleUsed calls visit on the rules and every rule they depend on,
// once each, until visit returns false; it reports whether visit accepted
// them all.
func everyRuleUsed(c *ast.Compiler, rules []*ast.Rule, visit func(*ast.Rule) bool) bool {
	// A copy: the compiler's own slice must not be appended to.
	rules = slices.Clone(rules)
	seen := map[*ast.Rule]bool{}
	for len(rules) > 0 {
		r := rules[len(rules)-1]
		rules = rules[:len(rules)-1]
		if seen[r] {
			continue
		}
		seen[r] = true
		if !visit(r) {
			return false
		}
		for dep := range c.Graph.Dependencies(r) {
			if d, ok := dep.(*ast.Rule); ok {
				rules = append(rules, d)
			}
		}
	}
	return true
}

func ruleReadsInventory(r *ast.Rule) bool {
	found := false
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		switch v := x.(type) {
		case ast.Ref:
			if v[0].Equal(ast.InputRootDocument) && readsInventoryRef(v) {
				found = true
			}
			for _, t := range v[1:] {
				vis.Walk(t)
			}
			return true // the head of a ref is no bare input
		case ast.Var:
			if v.Equal(ast.InputRootDocument.Value) {
				found = true
			}
		}
		return found
	})
	vis.Walk(r)
	return found
}

// readsInventoryRef: input.inventory, input[x] and input itself may read
// the inventory; input.object and the other fields do not.
func readsInventoryRef(ref ast.Ref) bool {
	if len(ref) < 2 {
		return true
	}
	key, ok := ref[1].Value.(ast.String)
	return !ok || key == "inventory"
}
