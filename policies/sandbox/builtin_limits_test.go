package sandbox_test

import (
	"context"
	"testing"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

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
	e := newTestEngine(t, policies.Options{PolicyDirs: []string{dir}})
	res, err := e.Evaluate(context.Background(), policies.Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"}}, Point: config.Admission, Operation: policies.Create})
	if err != nil || len(res.Findings) != 1 || res.Findings[0].RuleID != "ACME900" {
		t.Fatalf("%+v %v: every ordinary call must succeed", res, err)
	}
}
