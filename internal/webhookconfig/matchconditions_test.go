package webhookconfig

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/golden"
)

// TestMatchConditions evaluates the conditions as the API server would,
// with object and oldObject as untyped JSON, on the writes that matter:
// Karpenter's own keys and finalizer removal skip karpgate, anything a rule
// reads reaches it, on an object being deleted too; a DELETE reaches it
// only for a NodePool with a hold record. The e2e fault test checks the
// same against a real API server with karpgate stopped.
func TestMatchConditions(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType), cel.Variable("request", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	type program struct {
		name string
		prg  cel.Program
	}
	var programs []program
	for _, mc := range MatchConditions() {
		ast, iss := env.Compile(mc.Expression)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", mc.Name, iss.Err())
		}
		if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
			t.Fatalf("%s yields %v, not a bool", mc.Name, ast.OutputType())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		programs = append(programs, program{mc.Name, prg})
	}
	pool := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","labels":{"team":"a"},"annotations":{"karpenter.sh/nodepool-hash":"1","karpgate.io/waive-KG101":"tested"}},"spec":{"weight":1}}`
	tests := []struct {
		name      string
		operation string
		old, new  string // JSON merge patches on pool; "-" means no object
		wantCall  bool
	}{
		{"create", "CREATE", "-", `{}`, true},
		{"Karpenter's hash annotation", "UPDATE", `{}`, `{"metadata":{"annotations":{"karpenter.sh/nodepool-hash":"2","karpenter.sh/nodepool-hash-version":"v3"}}}`, false},
		{"Karpenter's hash annotation removed", "UPDATE", `{}`, `{"metadata":{"annotations":{"karpenter.sh/nodepool-hash":null}}}`, false},
		{"Karpenter's finalizer added", "UPDATE", `{}`, `{"metadata":{"finalizers":["karpenter.k8s.aws/termination"]}}`, false},
		{"another finalizer added", "UPDATE", `{}`, `{"metadata":{"finalizers":["example.com/keep"]}}`, true},
		{"resourceVersion and managedFields only", "UPDATE", `{"metadata":{"resourceVersion":"1"}}`, `{"metadata":{"resourceVersion":"2","managedFields":[{"manager":"karpenter"}]}}`, false},
		{"a spec change", "UPDATE", `{}`, `{"spec":{"weight":2}}`, true},
		{"the spec removed", "UPDATE", `{}`, `{"spec":null}`, true},
		{"the spec added", "UPDATE", `{"spec":null}`, `{}`, true},
		{"a label changed", "UPDATE", `{}`, `{"metadata":{"labels":{"team":"b"}}}`, true},
		{"the labels removed", "UPDATE", `{}`, `{"metadata":{"labels":null}}`, true},
		{"owner references", "UPDATE", `{}`, `{"metadata":{"ownerReferences":[{"kind":"X","name":"x"}]}}`, true},
		{"a waiver added", "UPDATE", `{}`, `{"metadata":{"annotations":{"karpgate.io/waive-KG102":"ok"}}}`, true},
		{"a waiver changed", "UPDATE", `{}`, `{"metadata":{"annotations":{"karpgate.io/waive-KG101":"other"}}}`, true},
		{"a waiver removed", "UPDATE", `{}`, `{"metadata":{"annotations":{"karpgate.io/waive-KG101":null}}}`, true},
		{"every annotation removed", "UPDATE", `{}`, `{"metadata":{"annotations":null}}`, true},
		{"annotations added to an object without any", "UPDATE", `{"metadata":{"annotations":null}}`, `{"metadata":{"annotations":{"karpgate.io/waive-KG101":"x"}}}`, true},
		{"another annotation (KG406 and KG407 read Karpenter's)", "UPDATE", `{}`, `{"metadata":{"annotations":{"compatibility.karpenter.sh/v1beta1-kubelet-conversion":"{}"}}}`, true},
		{"a finalizer removed while deleting", "UPDATE", `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["f","karpenter.k8s.aws/termination"]}}`, `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["karpenter.k8s.aws/termination"]}}`, false},
		{"a spec change while deleting", "UPDATE", `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"}}`, `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"},"spec":{"weight":5}}`, true},
		{"delete of a NodePool karpgate does not hold", "DELETE", `{}`, "-", false},
		{"delete of an object without annotations", "DELETE", `{"metadata":{"annotations":null}}`, "-", false},
		{"delete of a held NodePool", "DELETE", `{"metadata":{"annotations":{"karpgate.io/rollout-guard":"{}"}}}`, "-", true},
		{"a resume (the record removed)", "UPDATE", `{"metadata":{"annotations":{"karpgate.io/rollout-guard":"{}"}}}`, `{"metadata":{"annotations":{"karpgate.io/rollout-guard":null,"karpgate.io/rollout-guard-resumed":"2026-01-01T00:00:00Z"}}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]any{"request": map[string]any{"operation": tt.operation}, "object": nil, "oldObject": nil}
			if tt.new != "-" {
				vars["object"] = apply(t, pool, tt.new)
			}
			if tt.old != "-" {
				vars["oldObject"] = apply(t, pool, tt.old)
			}
			called := true
			for _, p := range programs {
				out, _, err := p.prg.Eval(vars)
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				if out.Value() != true {
					called = false
				}
			}
			if called != tt.wantCall {
				t.Fatalf("karpgate called: %v, want %v", called, tt.wantCall)
			}
		})
	}
}

// apply is an RFC 7386 merge patch of patch onto doc, decoded.
func apply(t *testing.T, doc, patch string) map[string]any {
	t.Helper()
	var d, p map[string]any
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatal(err)
	}
	return merge(d, p)
}

func merge(doc, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(doc, k)
		case map[string]any:
			dv, _ := doc[k].(map[string]any)
			if dv == nil {
				dv = map[string]any{}
			}
			doc[k] = merge(dv, pv)
		default:
			doc[k] = v
		}
	}
	return doc
}

// TestNoRuleReadsWhatTheConditionsExempt: the keys an UPDATE may change
// without reaching karpgate are Karpenter's own; a built-in rule that read
// one would not be asked about a change to it.
func TestNoRuleReadsWhatTheConditionsExempt(t *testing.T) {
	for _, f := range golden.Glob(t, "../../policies/rules/*/*.rego") {
		if strings.HasSuffix(f, "_test.rego") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range append(slices.Clone(karpenter.OwnAnnotations), karpenter.OwnFinalizers...) {
			if strings.Contains(string(src), key) {
				t.Errorf("%s reads %s, which the match conditions let change without karpgate", f, key)
			}
		}
		if strings.Contains(string(src), "finalizers") {
			t.Errorf("%s reads finalizers, whose removal never reaches karpgate", f)
		}
	}
}
