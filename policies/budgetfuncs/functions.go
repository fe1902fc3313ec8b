package budgetfuncs

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"
)

// Function is a Go function callable from Rego. Each one wraps the package
// that owns the logic (budget/ for cron and budgets), so a rule, the
// budgets command and the controller never disagree.
type Function struct {
	// Name is what Rego calls it, Description what policies/README.md says
	// of it.
	Name, Description string
	args              []types.Type
	result            types.Type
	// impl answers calls; the cache is shared by every evaluation of one
	// engine (or one verify run).
	impl func(cache *Cache) rego.BuiltinDyn
}

// Functions are karpgate's Rego builtins, in the order policies/README.md
// lists them.
func Functions() []Function { return slices.Clone(functions) }

func (f Function) function() *rego.Function {
	return &rego.Function{
		Name:        f.Name,
		Description: f.Description,
		Decl:        types.NewFunction(f.args, f.result),
		// No Memoize: OPA's memo keys a call by the printed text of its
		// arguments, a whole NodePool each time. The builtins cache what
		// they compute themselves, keyed by the few fields they read.
	}
}

// Declarations are the functions as the compiler declares them, for
// sandbox.Compile.
func Declarations() []*ast.Builtin {
	decls := make([]*ast.Builtin, 0, len(functions))
	for _, f := range functions {
		rf := f.function()
		decls = append(decls, &ast.Builtin{Name: rf.Name, Description: rf.Description, Decl: rf.Decl})
	}
	return decls
}

// RegoOptions register the functions with a query, every one answering
// from cache: one cache per engine (or verify run), shared by its queries.
func RegoOptions(cache *Cache) []func(*rego.Rego) {
	opts := make([]func(*rego.Rego), 0, len(functions))
	for _, f := range functions {
		opts = append(opts, rego.FunctionDyn(f.function(), f.impl(cache)))
	}
	return opts
}
