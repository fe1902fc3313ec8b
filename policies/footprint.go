package policies

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"slices"
)

// Budget rules: the rules whose findings depend on nothing but a NodePool's
// budgets, its apiVersion and kind, karpgate.yaml and what
// karpgate.budgets.analyze says about the instant of evaluation. A
// repository's NodePools mostly share their budgets, and an admission
// webhook sees the same budgets again and again, so the engine evaluates
// these rules once per distinct budgets and instant key and reuses the
// violations (see budgetRules in engine.go). The rules are found by reading
// them, not by name: one that reads anything else, however indirectly,
// stays with the others.

// budgetFootprint is what a budget rule may read of input.object: ref paths
// that start with one of these.
var budgetFootprint = [][]string{{"apiVersion"}, {"kind"}, {"spec", "disruption", "budgets"}}

const (
	builtinProblems = "karpgate.budgets.problems"
	builtinAnalyze  = "karpgate.budgets.analyze"
)

// readsOnlyBudgets reports whether the rules, and every rule or function
// they use, read input only within budgetFootprint, pass input.object only
// to the budget builtins, use the clock only as analyze's now_ns, call no
// other non-deterministic builtin and use no `with`.
func readsOnlyBudgets(c *ast.Compiler, rules []*ast.Rule) bool {
	if len(rules) == 0 {
		return false
	}
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
		if !ruleReadsOnlyBudgets(r) {
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

// ruleReadsOnlyBudgets checks one rule. The compiler has rewritten it so
// that every call is an expression of its own and nested values are bound
// to local variables, which is what makes a syntactic check enough: input
// reaches a builtin as `__local1__ = input.object; karpgate.budgets.problems(__local1__, __local2__)`.
func ruleReadsOnlyBudgets(r *ast.Rule) bool {
	objects := ast.NewVarSet() // locals bound to input.object
	clocks := ast.NewVarSet()  // locals bound to time.now_ns()
	ok := true
	ast.WalkExprs(r, func(e *ast.Expr) bool {
		if len(e.With) > 0 {
			ok = false
		}
		if v, isObject := boundToInputObject(e); isObject {
			objects.Add(v)
		}
		if e.IsCall() && e.Operator().String() == "time.now_ns" {
			if out, isVar := e.Operands()[0].Value.(ast.Var); isVar {
				clocks.Add(out)
			}
		}
		return false
	})
	if !ok {
		return false
	}
	check := func(t *ast.Term) bool { return termReadsOnlyBudgets(t, objects, clocks) }
	ast.WalkExprs(r, func(e *ast.Expr) bool {
		if !ok {
			return true
		}
		if _, isObject := boundToInputObject(e); isObject {
			return false
		}
		if !e.IsCall() {
			switch t := e.Terms.(type) {
			case *ast.Term:
				ok = check(t)
			case *ast.Every:
				ok = check(t.Domain)
			case *ast.SomeDecl:
				for _, sym := range t.Symbols {
					ok = ok && check(sym)
				}
			}
			return false
		}
		name := e.Operator().String()
		operands := e.Operands()
		switch name {
		case "time.now_ns":
			return false
		case builtinProblems, builtinAnalyze:
			if len(operands) > 0 && (isVarIn(operands[0], objects) || operands[0].Value.Compare(inputObjectRef) == 0) {
				operands = operands[1:]
			}
			if name == builtinAnalyze && len(operands) > 0 && isVarIn(operands[0], clocks) {
				operands = operands[1:]
			}
		default:
			if b, isBuiltin := ast.BuiltinMap[name]; isBuiltin && b.Nondeterministic {
				ok = false
				return true
			}
		}
		for _, t := range operands {
			if !check(t) {
				ok = false
				return true
			}
		}
		return false
	})
	// Heads hold values built from locals; a head that reads input itself
	// is checked like a body term.
	for rule := r; ok && rule != nil; rule = rule.Else {
		if rule.Head == nil {
			continue
		}
		for _, t := range append([]*ast.Term{rule.Head.Key, rule.Head.Value}, rule.Head.Args...) {
			if t != nil && !check(t) {
				return false
			}
		}
	}
	return ok
}

var inputObjectRef = ast.MustParseRef("input.object")

// boundToInputObject matches `v = input.object` in either order.
func boundToInputObject(e *ast.Expr) (ast.Var, bool) {
	if !e.IsEquality() && !e.IsAssignment() {
		return "", false
	}
	a, b := e.Operand(0), e.Operand(1)
	for _, pair := range [][2]*ast.Term{{a, b}, {b, a}} {
		v, isVar := pair[0].Value.(ast.Var)
		if isVar && pair[1].Value.Compare(inputObjectRef) == 0 {
			return v, true
		}
	}
	return "", false
}

func isVarIn(t *ast.Term, set ast.VarSet) bool {
	v, ok := t.Value.(ast.Var)
	return ok && set.Contains(v)
}

// termReadsOnlyBudgets checks every use of input, of locals bound to
// input.object and of locals bound to the clock inside t.
func termReadsOnlyBudgets(t *ast.Term, objects, clocks ast.VarSet) bool {
	ok := true
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		if !ok {
			return true
		}
		switch v := x.(type) {
		case ast.Ref:
			head, isVar := v[0].Value.(ast.Var)
			switch {
			case isVar && head.Equal(ast.InputRootDocument.Value):
				ok = len(v) > 2 && v[1].Equal(ast.InternedTerm("object")) && withinBudgetFootprint(v[2:])
			case isVar && objects.Contains(head):
				ok = withinBudgetFootprint(v[1:])
			case isVar && clocks.Contains(head):
				ok = false
			}
			for _, part := range v[1:] {
				vis.Walk(part)
			}
			return true
		case ast.Var:
			if v.Equal(ast.InputRootDocument.Value) || objects.Contains(v) || clocks.Contains(v) {
				ok = false
			}
		case *ast.ArrayComprehension:
			// The body's expressions are checked one by one, calls included;
			// here only the term the comprehension collects.
			vis.Walk(v.Term)
			return true
		case *ast.SetComprehension:
			vis.Walk(v.Term)
			return true
		case *ast.ObjectComprehension:
			vis.Walk(v.Key)
			vis.Walk(v.Value)
			return true
		}
		return !ok
	})
	vis.Walk(t)
	return ok
}

// withinBudgetFootprint: path (after input.object) starts with one of the
// footprint paths, spelled with constant keys.
func withinBudgetFootprint(path ast.Ref) bool {
	for _, allowed := range budgetFootprint {
		if len(path) < len(allowed) {
			continue
		}
		match := true
		for i, key := range allowed {
			s, isString := path[i].Value.(ast.String)
			if !isString || string(s) != key {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
