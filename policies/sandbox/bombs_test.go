package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// TestBuiltinBombsAreRefusedBeforeTheyAllocate: each policy makes far more
// in one builtin call than it is given. Every one is sized before the call
// runs and refused at load, by the cost check on the sample objects, with
// the builtin's name. The review's regex bomb (500 groups over a megabyte)
// allocated gigabytes in one call; here it is scaled down to a tenth of a
// megabyte, which allocates tens of megabytes unchecked and is refused all
// the same.
func TestBuiltinBombsAreRefusedBeforeTheyAllocate(t *testing.T) {
	const zeros = `sprintf("%0100000d", [0])` // 100,000 characters
	tests := []struct{ name, body, builtin string }{
		{"regex groups", `count(regex.find_all_string_submatch_n(concat("", ["()" | some _ in numbers.range(1, 500)]), ` + zeros + `, -1)) > 0`, "regex.find_all_string_submatch_n"},
		{"regex matches", `count(regex.find_n("", sprintf("%0200000d", [0]), -1)) > 0`, "regex.find_n"},
		{"regex split", `count(regex.split("", sprintf("%0200000d", [0]))) > 0`, "regex.split"},
		{"regex replace", `regex.replace(` + zeros + `, "", "$0$0$0$0$0$0$0$0$0$0$0$0$0$0$0") != ""`, "regex.replace"},
		{"indexof_n", `count(indexof_n(sprintf("%0200000d", [0]), "0")) > 0`, "indexof_n"},
		{"split", `count(split(sprintf("%0200000d", [0]), "")) > 0`, "split"},
		{"split_n", `count(strings.split_n(sprintf("%0200000d", [0]), "0", -1)) > 0`, "strings.split_n"},
		{"json.unmarshal", `count(json.unmarshal(concat("", ["[", replace(sprintf("%0200000d", [0]), "0", "0,"), "0]"]))) > 0`, "json.unmarshal"},
		{"yaml alias bomb", `count(yaml.unmarshal(concat("", ["a: &a [", replace(sprintf("%01000d", [0]), "0", "x,"), "x]\nb: [", replace(sprintf("%01000d", [0]), "0", "*a,"), "*a]\n"]))) > 0`, "yaml.unmarshal"},
		{"yaml.is_valid alias bomb", `yaml.is_valid(concat("", ["a: &a [", replace(sprintf("%01000d", [0]), "0", "x,"), "x]\nb: [", replace(sprintf("%01000d", [0]), "0", "*a,"), "*a]\n"]))`, "yaml.is_valid"},
	}
	// The size check, not the clock, must refuse each bomb: sizing a call
	// may scan its input (regex.split counts its matches), which under the
	// race detector on a busy machine took past the default 10 s limit.
	limits := sandbox.Limits{MaxEvaluationTime: time.Hour}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{userRule(t, tt.body)}, Limits: limits})
			want := tt.builtin + " would produce about"
			if !errors.Is(err, sandbox.ErrTooExpensive) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "refusing the policies") {
				t.Fatalf("got %v\nwant the policy refused at load because %s ...", err, want)
			}
		})
	}
}

// TestSizedBuiltinsStillAnswerAsOPADoes: below the limits, each sized
// builtin, and each one that stops with its evaluation, gives OPA's own
// answer, called for its truth or for its value.
func TestSizedBuiltinsStillAnswerAsOPADoes(t *testing.T) {
	dir := userRule(t, `regex.find_all_string_submatch_n("(a)(b)?", "abxa", -1) == [["ab", "a", "b"], ["a", "a", ""]]
	regex.find_n("a.", "abacad", 2) == ["ab", "ac"]
	regex.split(",+", "a,,b,c") == ["a", "b", "c"]
	indexof_n("abcab", "ab") == [0, 3]
	split("a,b", ",") == ["a", "b"]
	strings.split_n("a,b,c", ",", 2) == ["a", "b"]
	strings.split_n("a,b,c", ",", -1) == ["c"]
	json.unmarshal(`+"`"+`{"a": [1, 2]}`+"`"+`) == {"a": [1, 2]}
	yaml.unmarshal("a: &x [1]\nb: *x\n") == {"a": [1], "b": [1]}
	yaml.is_valid("a: 1")
	regex.match("^a+$", "aaa")
	regex.match("^a+$", "aaa") == true
	regex.replace("abcabc", "b(c)", "[$1]") == "a[c]a[c]"
	regex.replace("abc", "x", "y") == "abc"
	regex.find_n("^a", "aaa", -1) == ["a"]
	glob.match("*.com", ["."], "a.com")
	glob.match("*.com", null, "a.b.com") == true
	not glob.match("*.com", [], "a.b.com")`)
	e := newTestEngine(t, policies.Options{PolicyDirs: []string{dir}})
	res, err := e.Evaluate(context.Background(), policies.Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"}}, Point: config.Admission, Operation: policies.Create})
	if err != nil || len(res.Findings) != 1 || res.Findings[0].RuleID != "ACME900" {
		t.Fatalf("%+v %v: every call must give OPA's answer", res, err)
	}
}

func TestSchemaAndParserBuiltinsAreRefused(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`json.match_schema({}, {"$ref": "file:///etc/passwd"})[0]`, "json.match_schema is not available in karpgate policies: a schema's $ref can read local files"},
		{`json.verify_schema({})[0]`, "json.verify_schema is not available in karpgate policies"},
		{`graphql.is_valid("{ a }", "type Query { a: Int }")`, "graphql.is_valid is not available in karpgate policies"},
		{`rego.parse_module("x.rego", "package x") != {}`, "rego.parse_module is not available in karpgate policies"},
		{`regex.globs_match("a.*", "a.+")`, "regex.globs_match is not available in karpgate policies"},
	} {
		_, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{userRule(t, tt.body)}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

// slowRegex takes half a minute in one call of regex.match: a thousand
// optional characters before a b, searched for in 500,000 characters
// without one (Go's expressions run in time proportional to both).
const slowRegex = `regex.match(concat("", [concat("", ["a?" | some _ in numbers.range(1, 1000)]), "b"]), replace(sprintf("%0500000d", [0]), "0", "a"))`

// lintTimeLimit is the evaluation time TestEvaluationTimeLimitsLintToo
// sets. The engine checks every built-in rule against sample objects
// within it when it loads, so it must be far above what they take on a
// busy machine under the race detector (200 ms was not), and far below
// what slowRegex takes. The test lifts the step limit, which slowRegex's
// scan also counts against, so that only time stops it.
const lintTimeLimit = 5 * time.Second

// TestEvaluationTimeLimitsLintToo: where no caller sets a deadline (lint),
// Limits.MaxEvaluationTime does, and the error says the policies are too
// expensive.
func TestEvaluationTimeLimitsLintToo(t *testing.T) {
	dir := userRule(t, `n := to_number(object.get(input.object, ["metadata", "annotations", "example.com/slow"], "0"))
	n > 0
	`+slowRegex)
	e := newTestEngine(t, policies.Options{PolicyDirs: []string{dir}, Limits: sandbox.Limits{MaxEvaluationTime: lintTimeLimit, MaxSteps: math.MaxInt32}})
	req := policies.Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"example.com/slow": "1"}}}}
	_, err := e.Evaluate(context.Background(), req)
	if want := fmt.Sprintf("took longer than %v", lintTimeLimit); !errors.Is(err, sandbox.ErrTooExpensive) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want ErrTooExpensive: they %s", err, want)
	}
	if n := sandbox.StoppableCallsInFlight(); n != 0 {
		t.Fatalf("%d calls still running after the evaluation", n)
	}
}
