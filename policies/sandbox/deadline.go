package sandbox

import (
	"fmt"
	"runtime"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
)

// OPA checks for cancellation between expressions; inside one builtin call
// it does not, so a regular expression over a megabyte or a parse of a
// large document would hold the evaluation past its deadline. A slow
// builtin's call runs on a goroutine of its own, and the evaluation waits
// for it only until its context ends: then it stops with an error, and the
// call is left to finish on its own, its result dropped. Go cannot stop a
// goroutine, so an abandoned call keeps a CPU until it ends; the calls in
// flight, abandoned or not, are bounded (slowCalls), and a call that finds
// every slot taken waits for one within the same deadline. What such a
// call can allocate is bounded beforehand: the sized builtins among them
// are sized before they start.

// slowCalls bounds the slow builtin calls running at once in the process:
// as many as there are CPUs, which is all they could use.
var slowCalls = make(chan struct{}, runtime.GOMAXPROCS(0))

type builtinResult struct {
	outputs []*ast.Term
	err     error
}

func deadlinedBuiltin(name string, original topdown.BuiltinFunc) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		b := budgetOf(bctx)
		ctx := bctx.Context
		if b == nil || ctx == nil {
			return original(bctx, operands, iter)
		}
		// Eval turns the halt into the reason the context ended.
		stopped := func() error {
			return halt(bctx, fmt.Errorf("a call of %s was still running when the evaluation ran out of time", name))
		}
		select {
		case slowCalls <- struct{}{}:
		case <-ctx.Done():
			return stopped()
		}
		// The call gets a cache of its own: the evaluation's is not safe
		// for a goroutine that may outlive it.
		own := bctx
		own.Cache = builtins.Cache{}
		done := make(chan builtinResult, 1)
		go func() {
			defer func() { <-slowCalls }()
			var r builtinResult
			r.err = original(own, operands, func(t *ast.Term) error {
				r.outputs = append(r.outputs, t)
				return nil
			})
			done <- r
		}()
		select {
		case r := <-done:
			if r.err != nil {
				return r.err
			}
			for _, out := range r.outputs {
				if err := iter(out); err != nil {
					return err
				}
			}
			return nil
		case <-ctx.Done():
			return stopped()
		}
	}
}
