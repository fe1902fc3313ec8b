package budgetfuncs

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// The budget builtins read a NodePool's spec.disruption.budgets through
// budget/, the one home of Karpenter's budget semantics (cron
// parsing with the TZ=UTC prefix, windows, allowances).
//
//	karpgate.budgets.problems(nodepool)          what the API server or Karpenter rejects
//	karpgate.budgets.analyze(nodepool, now_ns)   what the budgets mean over the weeks around now
//
// analyze takes the time as an argument, not from the evaluation, so that
// Rego tests pin it with `with time.now_ns as ...` and the call is pure.
const (
	ProblemsName = "karpgate.budgets.problems"
	AnalyzeName  = "karpgate.budgets.analyze"
)

// FieldPaths are the part of a NodePool the budget package reads, and all
// the functions read of it: apiVersion (v1beta1 budgets have no reasons),
// kind and spec.disruption.budgets, keeping whatever stands in the way when
// spec or disruption is not an object, because the package reports that;
// and karpgate's hold record (karpgate.io/rollout-guard), because analyze
// leaves out the budget a valid record vouches for (see holdrecord.Held).
// The cache keys its entries by them, and a rule that hands the functions
// input.object reads these fields of it and no more, which the rule groups'
// memo (policies/memo) relies on.
var FieldPaths = [][]string{{"apiVersion"}, {"kind"}, {"spec", "disruption", "budgets"}, {"metadata", "annotations", karpenter.RolloutGuardAnnotation}}

var anyObject = types.NewObject(nil, types.NewDynamicProperty(types.S, types.A))

var functions = []Function{
	{
		Name:        ProblemsName,
		Description: "Problems of a NodePool's disruption budgets: objects with kind (schedule, duration, pairing, reasons, nodes, list), path, message, fix and effect (rejected by the API server, or blocks every reason at runtime).",
		args:        []types.Type{types.A},
		result:      types.NewArray(nil, anyObject),
		impl:        budgetProblemsBuiltin,
	},
	{
		Name:        AnalyzeName,
		Description: "What a NodePool's disruption budgets allow over the two weeks from the Monday before now_ns (UTC): per reason whether it is never allowed, when it is unlimited, and which budgets never open or never fire. The hold budget of karpgate's rollout guard or freeze is left out when a valid karpgate.io/rollout-guard record vouches for it; held is then its index and heldBy \"guard\", \"freeze\" or \"rolloutplan\".",
		args:        []types.Type{types.A, types.N},
		result:      anyObject,
		impl:        budgetAnalyzeBuiltin,
	},
}

func budgetProblemsBuiltin(cache *Cache) rego.BuiltinDyn {
	return func(bctx rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
		entry, err := cache.entry(bctx, terms[0].Value)
		if err != nil {
			return nil, err
		}
		return entry.problems()
	}
}

// problemsToRego converts budget.Problems to the objects the rules read.
func problemsToRego(problems []budget.Problem) []any {
	out := make([]any, 0, len(problems))
	for _, p := range problems {
		out = append(out, map[string]any{"kind": string(p.Kind), "path": p.Path, "message": p.Message, "fix": p.Fix, "effect": string(p.Effect)})
	}
	return out
}

// analysisToRego converts a budget.Analysis to the object the rules read.
func analysisToRego(a budget.Analysis, held *heldBudget) map[string]any {
	out := map[string]any{"readable": a.Readable, "blocked": a.Blocked}
	if held != nil {
		out["held"], out["heldBy"] = held.index, held.by
	}
	if !a.Readable || a.Blocked {
		return out
	}
	list := make([]any, 0, len(a.Budgets))
	for _, b := range a.Budgets {
		list = append(list, map[string]any{
			"index": b.Index, "path": b.Path, "nodes": b.Nodes, "scheduled": b.Scheduled,
			"neverFires": b.NeverFires, "neverActive": b.NeverActive,
		})
	}
	out["budgets"] = list
	if a.Reasons == nil {
		return out
	}
	reasons := make(map[string]any, len(a.Reasons))
	for r, ra := range a.Reasons {
		reasons[string(r)] = map[string]any{
			"neverAllowed":    ra.NeverAllowed,
			"binding":         intsToRego(ra.Binding),
			"scheduled":       intsToRego(ra.Scheduled),
			"alwaysUnlimited": ra.AlwaysUnlimited,
			"unlimited":       ra.UnlimitedText,
		}
	}
	out["reasons"] = reasons
	return out
}

func intsToRego(ints []int) []any {
	out := make([]any, len(ints))
	for i, v := range ints {
		out[i] = v
	}
	return out
}

func budgetAnalyzeBuiltin(cache *Cache) rego.BuiltinDyn {
	return func(bctx rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
		nowNS, ok := terms[1].Value.(ast.Number)
		if !ok {
			return nil, errors.New("karpgate.budgets.analyze: now_ns must be a number (time.now_ns())")
		}
		ns, ok := nowNS.Int64()
		if !ok {
			return nil, errors.New("karpgate.budgets.analyze: now_ns must be an integer")
		}
		entry, err := cache.entry(bctx, terms[0].Value)
		if err != nil {
			return nil, err
		}
		return entry.analysis(time.Unix(0, ns).UTC())
	}
}

// normaliseNumbers gives integers as int64, as the manifest reader does,
// where ast.JSON gives json.Number.
func normaliseNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normaliseNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normaliseNumbers(e)
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	}
	return v
}

func valueTerm(v any) (*ast.Term, error) {
	value, err := ast.InterfaceToValue(v)
	if err != nil {
		return nil, err
	}
	return ast.NewTerm(value), nil
}
