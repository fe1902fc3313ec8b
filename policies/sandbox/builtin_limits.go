package sandbox

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// elementBytes is what one element of a generated collection costs: the
// pointer the collection holds (small numbers are shared).
const elementBytes = 8

func init() {
	wrap := func(name string, f func(string, topdown.BuiltinFunc) topdown.BuiltinFunc) {
		original, decl := topdown.GetBuiltin(name), ast.BuiltinMap[name]
		if original == nil || decl == nil {
			panic("sandbox: OPA has no builtin " + name)
		}
		topdown.RegisterBuiltinFunc(name, f(name, original))
		// OPA hands most builtins no context, to save memory; the wrappers
		// need the evaluation's budget from it.
		decl.CanSkipBctx = false
	}
	// First the implementations that stop with their evaluation, so that
	// the limits below wrap them.
	for name, replace := range stoppableBuiltins {
		wrap(name, replace)
	}
	for name, size := range sizedBuiltins {
		wrap(name, func(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
			return limitedBuiltin(name, size, original)
		})
	}
	for _, name := range chargedBuiltins {
		wrap(name, chargedBuiltin)
	}
	// Last, so outermost: sizing a regular expression's call runs it, and
	// the count includes it.
	for name := range stoppableBuiltins {
		wrap(name, counted)
	}
}

// budgetOf is the evaluation's budget, nil outside karpgate's engine.
func budgetOf(bctx topdown.BuiltinContext) *evalBudget {
	if bctx.Cancel == nil {
		return nil
	}
	b, _ := bctx.Cancel.(*evalBudget)
	return b
}

// halt stops the evaluation with err. An ordinary builtin error would only
// make the expression undefined, and a deny rule silent.
func halt(bctx topdown.BuiltinContext, err error) error {
	return topdown.Halt{Err: &topdown.Error{Code: topdown.BuiltinErr, Message: err.Error(), Location: bctx.Location}}
}

func chargedBuiltin(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		b := budgetOf(bctx)
		if b == nil {
			return original(bctx, operands, iter)
		}
		return original(bctx, operands, func(out *ast.Term) error {
			if err := b.charge(name, shallowSize(out)); err != nil {
				return halt(bctx, err)
			}
			return iter(out)
		})
	}
}

// shallowSize is what a builtin's result cost to make: a string's bytes, a
// collection's pointers (its elements are mostly the input's, shared).
func shallowSize(t *ast.Term) int64 {
	switch v := t.Value.(type) {
	case ast.String:
		return int64(len(v))
	case ast.Number:
		return int64(len(v))
	case *ast.Array:
		return elementBytes * int64(v.Len())
	case ast.Set:
		return elementBytes * int64(v.Len())
	case ast.Object:
		return 2 * elementBytes * int64(v.Len())
	}
	return elementBytes
}

func limitedBuiltin(name string, size func([]*ast.Term, int64, stop) int64, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		limit := DefaultLimits.MaxBuiltinBytes
		b := budgetOf(bctx)
		if b != nil {
			limit = b.limits.MaxBuiltinBytes
		}
		n := size(operands, limit, stopOf(bctx))
		if n > limit {
			err := fmt.Errorf("%w: %s would produce about %d bytes, over the %d-byte limit for one builtin call", ErrTooExpensive, name, n, limit)
			if b != nil {
				b.exceed(err)
			}
			return halt(bctx, err)
		}
		if b != nil {
			if err := b.charge(name, n); err != nil {
				return halt(bctx, err)
			}
		}
		return original(bctx, operands, iter)
	}
}
