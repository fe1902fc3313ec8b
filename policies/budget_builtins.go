package policies

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"

	"github.com/karpgate/karpgate/disruption/budget"
)

// The budget builtins read a NodePool's spec.disruption.budgets through
// disruption/budget, the one home of Karpenter's budget semantics (cron
// parsing with the TZ=UTC prefix, windows, allowances).
//
//	karpgate.budgets.problems(nodepool)          what the API server or Karpenter rejects
//	karpgate.budgets.analyze(nodepool, now_ns)   what the budgets mean over the weeks around now
//
// analyze takes the time as an argument, not from the evaluation, so that
// Rego tests pin it with `with time.now_ns as ...` and the call is pure.
func init() {
	anyObject := types.NewObject(nil, types.NewDynamicProperty(types.S, types.A))
	karpgateBuiltins = append(karpgateBuiltins,
		karpgateBuiltin{
			name:        "karpgate.budgets.problems",
			description: "Problems of a NodePool's disruption budgets: objects with kind (schedule, duration, pairing, reasons, nodes, list), path, message, fix and effect (rejected by the API server, or blocks every reason at runtime).",
			args:        []types.Type{types.A},
			result:      types.NewArray(nil, anyObject),
			impl:        budgetProblemsBuiltin,
		},
		karpgateBuiltin{
			name:        "karpgate.budgets.analyze",
			description: "What a NodePool's disruption budgets allow over the two weeks from the Monday before now_ns (UTC): per reason whether it is never allowed, when it is unlimited, and which budgets never open or never fire.",
			args:        []types.Type{types.A, types.N},
			result:      anyObject,
			impl:        budgetAnalyzeBuiltin,
		},
	)
}

func budgetProblemsBuiltin(_ rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
	pool, err := objectFromTerm(terms[0])
	if err != nil {
		return nil, err
	}
	return valueTerm(budgetProblems(pool))
}

// budgetProblems lists what is wrong with the budgets as written, each
// classified by the field it concerns so that each rule picks its own.
func budgetProblems(pool map[string]any) []any {
	var out []any
	budgets, err := budget.FromNodePool(pool)
	if err != nil {
		// Wrong JSON types: each joined error reads "<path>: <message>".
		for _, line := range strings.Split(err.Error(), "\n") {
			path, msg, _ := strings.Cut(line, ": ")
			out = append(out, problem(classify(path, false), path, msg, "", budget.RejectedByAPIServer))
		}
		return out
	}
	for _, fe := range budget.Validate(budgets) {
		pairing := fe.Value == "" && (strings.HasSuffix(fe.Path, ".schedule") || strings.HasSuffix(fe.Path, ".duration")) && isPairingProblem(budgets, fe.Path)
		out = append(out, problem(classify(fe.Path, pairing), fe.Path, fe.Problem, fe.Fix, fe.Effect))
	}
	return out
}

// isPairingProblem reports whether a problem at budgets[i].schedule or
// .duration is about the field being absent while its partner is set.
func isPairingProblem(budgets []budget.Budget, path string) bool {
	for _, b := range budgets {
		switch path {
		case b.Path() + ".schedule":
			return b.Schedule == nil
		case b.Path() + ".duration":
			return b.Duration == nil
		}
	}
	return false
}

func classify(path string, pairing bool) string {
	if pairing {
		return "pairing"
	}
	last := path[strings.LastIndex(path, ".")+1:]
	if i := strings.IndexByte(last, '['); i >= 0 {
		last = last[:i]
	}
	switch last {
	case "schedule", "duration", "reasons", "nodes":
		return last
	}
	return "list"
}

func problem(kind, path, msg, fix string, effect budget.Effect) map[string]any {
	return map[string]any{"kind": kind, "path": path, "message": msg, "fix": fix, "effect": string(effect)}
}

func budgetAnalyzeBuiltin(_ rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
	pool, err := objectFromTerm(terms[0])
	if err != nil {
		return nil, err
	}
	nowNS, ok := terms[1].Value.(ast.Number)
	if !ok {
		return nil, errors.New("karpgate.budgets.analyze: now_ns must be a number (time.now_ns())")
	}
	ns, ok := nowNS.Int64()
	if !ok {
		return nil, errors.New("karpgate.budgets.analyze: now_ns must be an integer")
	}
	return valueTerm(analyzeBudgets(pool, time.Unix(0, ns).UTC()))
}

// objectFromTerm turns a Rego value into the JSON values the budget package
// reads, with integers as int64 as the manifest reader gives them.
func objectFromTerm(t *ast.Term) (map[string]any, error) {
	v, err := ast.JSON(t.Value)
	if err != nil {
		return nil, err
	}
	m, ok := normaliseNumbers(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want an object, got %s", ast.ValueName(t.Value))
	}
	return m, nil
}

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
