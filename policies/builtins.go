package policies

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"
)

// karpgateBuiltin is a Go function callable from Rego. Each one wraps the
// package that owns the logic (budget/ for cron and budgets), so
// a rule, the budgets command and the controller never disagree.
type karpgateBuiltin struct {
	name        string
	description string
	args        []types.Type
	result      types.Type
	// impl answers calls; the cache is shared by every evaluation of one
	// engine (or one verify run).
	impl func(cache *budgetCache) rego.BuiltinDyn
}

// karpgateBuiltins is filled by the files that define each builtin.
var karpgateBuiltins []karpgateBuiltin

func (b karpgateBuiltin) function() *rego.Function {
	return &rego.Function{
		Name:        b.name,
		Description: b.description,
		Decl:        types.NewFunction(b.args, b.result),
		// No Memoize: OPA's memo keys a call by the printed text of its
		// arguments, a whole NodePool each time. The builtins cache what
		// they compute themselves, keyed by the few fields they read.
	}
}

func (b karpgateBuiltin) astDecl() *ast.Builtin {
	f := b.function()
	return &ast.Builtin{Name: f.Name, Description: f.Description, Decl: f.Decl}
}

// builtinDeclarations are karpgate's builtins as the compiler declares
// them (see sandbox.Capabilities).
func builtinDeclarations() []*ast.Builtin {
	decls := make([]*ast.Builtin, 0, len(karpgateBuiltins))
	for _, b := range karpgateBuiltins {
		decls = append(decls, b.astDecl())
	}
	return decls
}

func (b karpgateBuiltin) regoOption(cache *budgetCache) func(*rego.Rego) {
	return rego.FunctionDyn(b.function(), b.impl(cache))
}

// builtinOptions registers karpgate's builtins with one shared cache.
func builtinOptions(cache *budgetCache) []func(*rego.Rego) {
	opts := make([]func(*rego.Rego), 0, len(karpgateBuiltins))
	for _, b := range karpgateBuiltins {
		opts = append(opts, b.regoOption(cache))
	}
	return opts
}
