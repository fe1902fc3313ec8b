package policies

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
)

// userRule writes a one-rule policy folder whose violation holds when
// body does, and returns the folder.
func userRule(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	src := `# METADATA
# title: Expensive
# custom:
#   id: ACME900
#   severity: deny
#   kinds: [NodePool, EC2NodeClass]
package karpgate.rules.acme_expensive

violation contains {"msg": "expensive"} if {
	` + body + `
}
`
	if err := os.WriteFile(filepath.Join(dir, "expensive.rego"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExpensivePoliciesAreRefusedAtLoad: a policy that runs past its limits
// on an ordinary object never serves a request; the error names the rule,
// the file and what ran out.
func TestExpensivePoliciesAreRefusedAtLoad(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"a huge numbers.range", `count(numbers.range(1, 1000000000)) > 0`,
			[]string{"numbers.range would produce about 8000000000 bytes, over the 1048576-byte limit for one builtin call", "ACME900"}},
		{"a loop past the step budget", `count([[i, j] | some i in numbers.range(1, 2000); some j in numbers.range(1, 2000)]) > 0`,
			[]string{"they took more than 250000 evaluation steps", "rule ACME900", "expensive.rego"}},
		{"sprintf padding", `sprintf("%0999999999d", [1]) != ""`, []string{"sprintf would produce about 1000000015 bytes"}},
		{"a shift to a billion bits", `bits.lsh(1, 1000000000) > 0`, []string{"bits.lsh would produce"}},
		{"a string repeated through concat", `s := concat("", [sprintf("%0100000d", [1]) | some i in numbers.range(1, 100)]); s != ""`, []string{"concat would produce about"}},
		{"replace between every character", `s := sprintf("%0100000d", [1]); replace(s, "", s) != ""`, []string{"replace would produce"}},
		{"marshalling a shared value many times", `s := sprintf("%0100000d", [1]); json.marshal([s | some i in numbers.range(1, 100)]) != ""`, []string{"json.marshal would produce"}},
		{"a copy in a loop", `s := sprintf("%0100000d", [1]); count([upper(s) | some i in numbers.range(1, 1000)]) > 0`, []string{"its builtins made more than 16777216 bytes in all (upper among them)"}},
		{"regex.replace echoing each match", `s := sprintf("%0100000d", [1]); regex.replace(s, "0", "$0$0$0$0$0$0$0$0$0$0$0$0") != ""`, []string{"regex.replace would produce"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Options{PolicyDirs: []string{userRule(t, tt.body)}})
			if err == nil || !errors.Is(err, ErrTooExpensive) {
				t.Fatalf("New: %v, want ErrTooExpensive", err)
			}
			for _, want := range append(tt.want, "refusing the policies: on a sample") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}

// TestAnObjectThatMakesAPolicyExpensiveIsCutOff: a policy fine on ordinary
// objects but not on this one is stopped with an error, and the engine
// keeps answering for other objects.
func TestAnObjectThatMakesAPolicyExpensiveIsCutOff(t *testing.T) {
	dir := userRule(t, `n := to_number(object.get(input.object, ["metadata", "annotations", "example.com/n"], "1"))
	count(numbers.range(1, n)) > 1000`)
	e := newTestEngine(t, Options{PolicyDirs: []string{dir}})
	pool := func(n string) Request {
		return Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"example.com/n": n}}}, Point: config.Admission, Operation: Create}
	}
	if _, err := e.Evaluate(context.Background(), pool("1000000000")); !errors.Is(err, ErrTooExpensive) || !strings.Contains(err.Error(), "evaluating NodePool/p") {
		t.Fatalf("got %v, want ErrTooExpensive for NodePool/p", err)
	}
	res, err := e.Evaluate(context.Background(), pool("2000"))
	if err != nil || len(res.Findings) == 0 || res.Findings[0].RuleID != "ACME900" {
		t.Fatalf("an object within the limits: %+v %v", res, err)
	}
}

// TestRegoIsCancelledMidEvaluationAtTheDeadline: with the step budget out of
// the way, an evaluation that could not finish in any test's lifetime ends
// at its context's deadline with that error, between two steps.
func TestRegoIsCancelledMidEvaluationAtTheDeadline(t *testing.T) {
	dir := userRule(t, `n := to_number(object.get(input.object, ["metadata", "annotations", "example.com/n"], "1"))
	count([[i, j, k] | some i in numbers.range(1, n); some j in numbers.range(1, n); some k in numbers.range(1, n)]) > 0`)
	e := newTestEngine(t, Options{PolicyDirs: []string{dir}, Limits: Limits{MaxSteps: 1 << 62}})
	// 10^12 triples: no machine gets through them before the deadline.
	req := Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"example.com/n": "10000"}}}, Point: config.Admission, Operation: Create}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := e.Evaluate(ctx, req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's deadline", err)
	}
	if errors.Is(err, ErrTooExpensive) {
		t.Fatalf("the step budget stopped it, not the deadline: %v", err)
	}
}

func TestTemplatesAndPathEnumerationAreForbidden(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`strings.render_template("{{.x}}", {"x": 1}) != ""`, "strings.render_template is not available in karpgate policies: a template's output has no size"},
		{`count(graph.reachable_paths({"a": ["b"]}, {"a"})) > 0`, "graph.reachable_paths is not available in karpgate policies"},
	} {
		_, err := New(context.Background(), Options{PolicyDirs: []string{userRule(t, tt.body)}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

// TestBuiltinLimitsLeaveOrdinaryCallsAlone: the sized builtins still work
// below the limit, with the results OPA gives.
func TestBuiltinLimitsLeaveOrdinaryCallsAlone(t *testing.T) {
	dir := userRule(t, `count(numbers.range(1, 100000)) == 100000
	numbers.range_step(0, 10, 5) == [0, 5, 10]
	bits.lsh(1, 64) == 18446744073709551616
	sprintf("%05d-%s", [7, "x"]) == "00007-x"
	concat("-", ["a", "b"]) == "a-b"
	replace("aaa", "a", "bb") == "bbbbbb"
	strings.replace_n({"a": "b"}, "aa") == "bb"
	regex.replace("abc", "b", "[$0]") == "a[b]c"
	json.marshal({"a": [1, 2]}) == "{\"a\":[1,2]}"
	json.marshal_with_options({"a": 1}, {"pretty": true, "indent": "  "}) != ""
	yaml.marshal({"a": 1}) != ""`)
	e := newTestEngine(t, Options{PolicyDirs: []string{dir}})
	res, err := e.Evaluate(context.Background(), Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"}}, Point: config.Admission, Operation: Create})
	if err != nil || len(res.Findings) != 1 || res.Findings[0].RuleID != "ACME900" {
		t.Fatalf("%+v %v: every ordinary call must succeed", res, err)
	}
}
