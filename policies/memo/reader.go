package memo

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/policies/budgetfuncs"
)

// ruleReader follows one rule. The compiler has rewritten it so that every
// call is an expression of its own and nested values are bound to locals:
// input reaches a builtin as
// `__local1__ = input.object; karpgate.budgets.problems(__local1__, __local2__)`.
type ruleReader struct {
	f      *footprint
	inputs map[ast.Var][]string // locals bound to input.<constant path>
	clocks ast.VarSet           // locals bound to time.now_ns()
	ok     bool
}

func (f *footprint) addRule(r *ast.Rule) bool {
	rr := &ruleReader{f: f, inputs: map[ast.Var][]string{}, clocks: ast.NewVarSet(), ok: true}
	// Bindings first, to a fixed point: a local may be bound from another.
	for changed := true; changed; {
		changed = false
		ast.WalkExprs(r, func(e *ast.Expr) bool {
			if v, path, isBinding := rr.binding(e); isBinding {
				if _, known := rr.inputs[v]; !known {
					rr.inputs[v] = path
					changed = true
				}
			}
			if e.IsCall() && e.Operator().String() == "time.now_ns" {
				if out, isVar := e.Operands()[0].Value.(ast.Var); isVar {
					rr.clocks.Add(out)
				}
			}
			return false
		})
	}
	ast.WalkExprs(r, func(e *ast.Expr) bool {
		rr.expr(e)
		return !rr.ok
	})
	for rule := r; rr.ok && rule != nil; rule = rule.Else {
		if rule.Head == nil {
			continue
		}
		for _, t := range append([]*ast.Term{rule.Head.Key, rule.Head.Value}, rule.Head.Args...) {
			if t != nil {
				rr.term(t)
			}
		}
	}
	return rr.ok
}

// path is the constant path under input a term names: a ref rooted at
// input or at a local bound to input, up to its first non-constant key.
// full is false when keys follow that are not constant.
func (rr *ruleReader) path(t *ast.Term) (path []string, full, isInput bool) {
	ref, isRef := t.Value.(ast.Ref)
	if !isRef {
		if v, isVar := t.Value.(ast.Var); isVar {
			if base, bound := rr.inputs[v]; bound {
				return base, true, true
			}
		}
		return nil, false, false
	}
	head, isVar := ref[0].Value.(ast.Var)
	var base []string
	switch {
	case isVar && head.Equal(ast.InputRootDocument.Value):
	case isVar:
		b, bound := rr.inputs[head]
		if !bound {
			return nil, false, false
		}
		base = b
	default:
		return nil, false, false
	}
	path = slices.Clone(base)
	for _, part := range ref[1:] {
		s, isString := part.Value.(ast.String)
		if !isString {
			return path, false, true
		}
		path = append(path, string(s))
	}
	return path, true, true
}

// binding matches `v = <constant path under input>`, in either order.
func (rr *ruleReader) binding(e *ast.Expr) (ast.Var, []string, bool) {
	if !e.IsEquality() && !e.IsAssignment() {
		return "", nil, false
	}
	a, b := e.Operand(0), e.Operand(1)
	for _, pair := range [][2]*ast.Term{{a, b}, {b, a}} {
		v, isVar := pair[0].Value.(ast.Var)
		if !isVar || v.Equal(ast.InputRootDocument.Value) {
			continue
		}
		if _, isRef := pair[1].Value.(ast.Ref); !isRef {
			continue
		}
		if path, full, isInput := rr.path(pair[1]); isInput && full && len(path) > 0 {
			return v, path, true
		}
	}
	return "", nil, false
}

func (rr *ruleReader) expr(e *ast.Expr) {
	if len(e.With) > 0 {
		rr.ok = false
		return
	}
	if v, path, isBinding := rr.binding(e); isBinding && slices.Equal(rr.inputs[v], path) {
		rr.f.exists = append(rr.f.exists, path)
		return
	}
	if !e.IsCall() {
		switch t := e.Terms.(type) {
		case *ast.Term:
			rr.term(t)
		case *ast.Every:
			rr.term(t.Domain)
		case *ast.SomeDecl:
			for _, sym := range t.Symbols {
				rr.term(sym)
			}
		}
		return
	}
	name := e.Operator().String()
	operands := e.Operands()
	switch name {
	case "time.now_ns":
		return
	case budgetfuncs.ProblemsName, budgetfuncs.AnalyzeName:
		if path, full, isInput := rr.path(operands[0]); isInput && full && slices.Equal(path, []string{"object"}) {
			rr.f.budgets = true
			operands = operands[1:]
			if name == budgetfuncs.AnalyzeName && len(operands) > 0 && isVarIn(operands[0], rr.clocks) {
				operands = operands[1:]
			}
		}
	case "is_object", "is_string", "is_number", "is_boolean", "is_array", "is_set", "is_null", "type_name":
		// A type test reads what kind of value a field holds, which an
		// exists path keeps (an object there becomes {}, anything else
		// stays whole; see valuekey.Projection): rules that judge only the
		// type of a field and some of its children are not keyed by the
		// rest of it.
		if len(operands) > 0 {
			if path, full, isInput := rr.path(operands[0]); isInput && full && len(path) > 0 {
				rr.f.exists = append(rr.f.exists, path)
				operands = operands[1:]
			}
		}
	case "object.get":
		// object.get(<input path>, ["a", "b"], default) reads <input path>.a.b.
		if len(operands) >= 2 {
			if base, full, isInput := rr.path(operands[0]); isInput && full {
				if keys, constant := constantKeys(operands[1]); constant {
					rr.f.paths = append(rr.f.paths, append(slices.Clone(base), keys...))
					operands = operands[2:]
				}
			}
		}
	default:
		if b, isBuiltin := ast.BuiltinMap[name]; isBuiltin && b.Nondeterministic {
			rr.ok = false
			return
		}
	}
	for _, t := range operands {
		rr.term(t)
	}
}

// constantKeys reads object.get's path argument: a string, or an array of
// strings.
func constantKeys(t *ast.Term) ([]string, bool) {
	switch v := t.Value.(type) {
	case ast.String:
		return []string{string(v)}, true
	case *ast.Array:
		keys := make([]string, 0, v.Len())
		for i := range v.Len() {
			s, isString := v.Elem(i).Value.(ast.String)
			if !isString {
				return nil, false
			}
			keys = append(keys, string(s))
		}
		return keys, true
	}
	return nil, false
}

func isVarIn(t *ast.Term, set ast.VarSet) bool {
	v, ok := t.Value.(ast.Var)
	return ok && set.Contains(v)
}

// term counts every use of input, of locals bound to it and of the clock
// inside t.
func (rr *ruleReader) term(t *ast.Term) {
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		if !rr.ok {
			return true
		}
		switch v := x.(type) {
		case ast.Ref:
			if head, isVar := v[0].Value.(ast.Var); isVar && rr.clocks.Contains(head) {
				rr.ok = false
				return true
			}
			if path, _, isInput := rr.path(ast.NewTerm(v)); isInput {
				if len(path) == 0 {
					rr.ok = false // input[x]: any field
					return true
				}
				rr.f.paths = append(rr.f.paths, path)
			}
			for _, part := range v[1:] {
				vis.Walk(part)
			}
			return true // the head is not a use of its own
		case ast.Var:
			switch {
			case v.Equal(ast.InputRootDocument.Value), rr.clocks.Contains(v):
				rr.ok = false
			default:
				if base, bound := rr.inputs[v]; bound {
					rr.f.paths = append(rr.f.paths, base)
				}
			}
		case *ast.ArrayComprehension:
			// The body's expressions are walked one by one, calls
			// included; here only the term the comprehension collects.
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
		return !rr.ok
	})
	vis.Walk(t)
}
