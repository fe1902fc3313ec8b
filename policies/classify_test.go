package policies

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/memo"
)

// TestRuleClassification pins which built-in rules the engine evaluates
// apart: the cross-object rules (after lint has read its whole input) and
// the rules memoized by their footprint (once per distinct fields read). A
// rule that starts reading more than its class allows must leave the class,
// which these cases check with user rules written to do one thing each.
func TestRuleClassification(t *testing.T) {
	e := newTestEngine(t, Options{})
	var cross, memoized []string
	for _, r := range e.catalog {
		if r.crossObject {
			cross = append(cross, r.ID)
		}
		if r.group != "" {
			memoized = append(memoized, r.ID)
		}
	}
	if want := []string{"KG501", "KG502"}; !slices.Equal(cross, want) {
		t.Errorf("cross-object rules: got %v, want %v", cross, want)
	}
	// Not memoized: the update rules, which compare paths they compute and
	// judge only UPDATEs. The mutations are, in groups of their own. The
	// waiver rules and KG406/KG407 read annotations, which objects share
	// like any other content, or input.waivers, which the engine reads from
	// them; KG006 judges only requests (who writes a waiver).
	if want := []string{"KG001", "KG002", "KG003", "KG004", "KG005", "KG101", "KG102", "KG103", "KG104", "KG105", "KG106", "KG107", "KG108", "KG109", "KG110", "KG201", "KG202", "KG203", "KG204", "KG205", "KG206", "KG301", "KG302", "KG303", "KG304", "KG401", "KG402", "KG403", "KG404", "KG405", "KG406", "KG407", "KG408", "KG701", "KG702"}; !slices.Equal(memoized, want) {
		t.Errorf("memoized rules: got %v, want %v", memoized, want)
	}
	groups := map[string]*memo.Group{}
	for _, g := range e.groups {
		groups[g.ID] = g
	}
	for _, r := range e.catalog {
		if g := groups[r.group]; g != nil && g.Mutates != r.Mutates {
			t.Errorf("%s (mutates %v) is in %s, a group with mutates %v: a group evaluates for one webhook only", r.ID, r.Mutates, g.ID, g.Mutates)
		}
	}

	rules := []struct {
		name, body            string
		crossObject, memoized bool
	}{
		{"budgets", `some b in input.object.spec.disruption.budgets; b.nodes == "0"`, false, true},
		{"budgets via a local", `o := input.object; count(o.spec.disruption.budgets) > 3`, false, true},
		{"problems builtin", `some p in karpgate.budgets.problems(input.object); p.kind == "nodes"`, false, true},
		{"analyze at now", `karpgate.budgets.analyze(input.object, time.now_ns()).blocked`, false, true},
		{"analyze at a fixed time", `karpgate.budgets.analyze(input.object, 0).blocked`, false, true},
		{"apiVersion and kind", `input.object.kind == "NodePool"; endswith(input.object.apiVersion, "/v1")`, false, true},
		{"spec.disruption", `input.object.spec.disruption.consolidateAfter == "0s"`, false, true},
		{"object.get with a constant path", `object.get(input.object, ["spec", "disruption", "budgets"], []) == []`, false, true},
		{"production", `input.production; input.object.kind == "NodePool"`, false, true},
		{"the name", `input.object.metadata.name == "x"`, false, false},
		{"the labels through a local", `m := input.object.metadata; m.labels.team == "x"`, false, true},
		{"the annotations", `some k, _ in input.object.metadata.annotations; startswith(k, "x")`, false, true},
		{"the old object's annotations", `input.oldObject.metadata.annotations.x == "y"`, false, true},
		{"the whole metadata", `count(input.object.metadata) > 9`, false, false},
		{"the uid", `input.object.metadata.uid == "x"`, false, false},
		{"the old object's name", `input.oldObject.metadata.name == "x"`, false, false},
		{"the whole object to a builtin", `count(input.object) > 3`, false, false},
		{"a type test", `is_object(input.object.spec.template.spec.nodeClassRef)`, false, true},
		{"a type test of the whole object", `type_name(input.object) == "object"`, false, true},
		{"a type test of a local", `r := input.object.spec.template.spec.nodeClassRef; is_object(r)`, false, true},
		{"a type test of the name", `is_string(input.object.metadata.name)`, false, false},
		{"whether the name is defined", `_ = input.object.metadata.name`, false, false},
		// Joins no group that keeps the object only as {}.
		{"budgets and the type of a field beside them", `count(input.object.spec.disruption.budgets) > 0; is_number(input.object.spec.weight)`, false, true},
		{"object.get with a computed path", `p := split("spec.disruption", "."); object.get(input.object, p, null)`, false, false},
		{"the clock elsewhere", `time.now_ns() > 0; input.object.kind == "NodePool"`, false, false},
		{"analyze of another object", `karpgate.budgets.analyze({"spec": input.object.spec}, time.now_ns()).blocked`, false, false},
		{"a dynamic key", `some k; input.object[k] == "x"`, false, false},
		{"with", `count(input.object.spec.disruption.budgets) > 0 with input.object.spec.disruption.budgets as [1]`, false, false},
		{"a random number", `rand.intn("x", 10) > 5; input.object.kind == "NodePool"`, false, false},
		{"the inventory", `input.inventory.objects.NodePool[input.object.metadata.name]`, true, false},
		{"all of input", `x := input; x.object.kind == "NodePool"`, true, false},
		{"input by a dynamic key", `some k; input[k].kind == "NodePool"`, true, false},
	}
	dir := t.TempDir()
	for i, r := range rules {
		src := "# METADATA\n# title: " + r.name + "\n# custom:\n#   id: " + testRuleID(i) + "\n#   severity: warn\n#   kinds: [NodePool]\npackage karpgate.rules.test_" + strconv.Itoa(i) + "\n\nviolation contains {\"msg\": \"x\"} if {\n\t" + r.body + "\n}\n"
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".rego"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	user := newTestEngine(t, Options{PolicyDirs: []string{dir}})
	for i, r := range rules {
		rule, ok := user.catalog.Lookup(testRuleID(i))
		if !ok {
			t.Fatalf("%s not loaded", r.name)
		}
		if rule.crossObject != r.crossObject || (rule.group != "") != r.memoized {
			t.Errorf("%s: cross-object %v, memoized %v; want %v, %v", r.name, rule.crossObject, rule.group != "", r.crossObject, r.memoized)
		}
	}
	if user.CrossObjectPaths() != nil {
		t.Error("user rules read the inventory, so cross-object evaluation must keep whole objects")
	}
	// Classifying must leave the compiler as it was, and memoizing must not
	// change what rules find: the same findings as an engine that evaluates
	// every rule together each time (but for the random one).
	uncached := newTestEngine(t, Options{PolicyDirs: []string{dir}, evaluateEveryRuleEveryTime: true})
	obj := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"weight": int64(10), "disruption": map[string]any{"budgets": []any{map[string]any{"nodes": "0"}, "x", 3, map[string]any{}}}}}
	deterministic := func(e *Engine) []string {
		res, err := e.Evaluate(context.Background(), Request{Object: obj, Point: config.Admission})
		if err != nil {
			t.Fatal(err)
		}
		random := testRuleID(slices.IndexFunc(rules, func(r struct {
			name, body            string
			crossObject, memoized bool
		}) bool {
			return r.name == "a random number"
		}))
		return slices.DeleteFunc(summary(res.Findings), func(s string) bool { return strings.HasPrefix(s, random+" ") })
	}
	if got, want := deterministic(user), deterministic(uncached); !slices.Equal(got, want) {
		t.Errorf("memoized rules found %v, evaluated every time %v", got, want)
	}
}

func testRuleID(i int) string { return fmt.Sprintf("TEST%d", 100+i) }

// A repository's NodePools mostly differ in their names and in the
// EC2NodeClass they name; the rules that judge nodeClassRef read its type,
// group and kind only, so such NodePools share every remembered group, at
// both enforcement points and in the mutating webhook.
func TestNodePoolsNamingOtherClassesShareTheirGroups(t *testing.T) {
	e := newTestEngine(t, Options{})
	pool := func(name, class string) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class},
				"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot"}}},
			}}}}
	}
	requests := func(object map[string]any) []Request {
		return []Request{
			{Object: object, Operation: Create, Point: config.CI},
			{Object: object, Operation: Create, Point: config.Admission},
			{Object: object, Operation: Create, Point: config.Admission, MutationsOnly: true},
		}
	}
	for _, req := range requests(pool("a", "class-a")) {
		if _, err := e.Evaluate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	remembered := len(e.groupRuns.Keys())
	if remembered == 0 {
		t.Fatal("no group remembered: the test no longer sees the memo at work")
	}
	for _, req := range requests(pool("b", "class-b")) {
		if _, err := e.Evaluate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(e.groupRuns.Keys()); got != remembered {
		var keys []string
		for _, k := range e.groupRuns.Keys() {
			keys = append(keys, strconv.Quote(k))
		}
		slices.Sort(keys)
		t.Errorf("a NodePool naming another EC2NodeClass added %d remembered groups:\n%s", got-remembered, strings.Join(keys, "\n"))
	}
}

// A group whose reduced input prints longer than memo.MaxKeyBytes (a large
// annotation, such as kubectl's copy of the whole object) is evaluated
// every time and never remembered, so the memo's memory stays bounded; it
// finds what it would find remembered.
func TestLongMemoKeysAreNotRemembered(t *testing.T) {
	e := newTestEngine(t, Options{})
	pool := func(note string) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{
			"karpgate.io/waive-KG999": "no such rule",
			"note":                    "note:" + note,
		}}, "spec": map[string]any{}}
	}
	longest := func() int {
		n := 0
		for _, k := range e.groupRuns.Keys() {
			n = max(n, len(k))
		}
		return n
	}
	for _, tt := range []struct {
		name       string
		note       string
		remembered bool
	}{
		{"short", "x", true},
		{"long", strings.Repeat("x", memo.MaxKeyBytes), false},
	} {
		e.groupRuns = memo.New[[]rawViolation](e.budgets) // forget the previous case's groups
		for range 2 {
			res, err := e.Evaluate(context.Background(), Request{Object: pool(tt.note), Operation: Create, Point: config.Admission})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res.Findings); !slices.Contains(got, "KG002 warn metadata.annotations[karpgate.io/waive-KG999]") {
				t.Errorf("%s: KG002 not found: %v", tt.name, got)
			}
		}
		n := longest()
		if n > memo.MaxKeyBytes {
			t.Errorf("%s: a key of %d bytes was remembered, over the %d-byte bound", tt.name, n, memo.MaxKeyBytes)
		}
		remembered := false
		for _, k := range e.groupRuns.Keys() {
			remembered = remembered || strings.Contains(k, "note:")
		}
		if remembered != tt.remembered {
			t.Errorf("%s: the annotations' group remembered %v, want %v", tt.name, remembered, tt.remembered)
		}
	}
}

// An evaluation whose rules are all memoized and remembered makes its keys
// from the request's Go values and never converts the object to Rego's
// representation; an object holding a value the keys cannot be made from
// is converted, and finds the same.
func TestRememberedGroupsNeedNoConversion(t *testing.T) {
	e := newTestEngine(t, Options{Now: func() time.Time { return fixedNow }})
	// extra is nodeClassRef's kind, which the mutation group (KG701) and
	// a validating group (KG404's) read.
	pool := func(extra any) map[string]any {
		return map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"karpenter.sh/do-not-evict": "true"}},
			"spec": map[string]any{"disruption": map[string]any{"budgets": []any{map[string]any{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}}},
				"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"name": "default", "kind": extra}}}}}
	}
	for _, tt := range []struct {
		name      string
		extra     any
		converted bool
	}{
		{"decoded values", int64(10), false},
		{"a value the keys do not mirror", uint64(10), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, mutations := range []bool{false, true} {
				req := Request{Object: pool(tt.extra), Operation: Create, Point: config.Admission, MutationsOnly: mutations}
				first, err := e.Evaluate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if len(first.Findings) == 0 {
					t.Fatal("no findings: the test no longer sees the memo at work")
				}
				in := e.newEvalInput(req, config.Admission, fixedNow)
				var again []rawViolation
				for i, g := range e.groups {
					if g.Mutates != mutations || !g.Applies[config.Admission]["NodePool"] {
						continue
					}
					vs, err := e.groupViolations(context.Background(), g, i, in, fixedNow, "NodePool/p")
					if err != nil {
						t.Fatal(err)
					}
					again = append(again, vs...)
				}
				if in.converted != tt.converted {
					t.Errorf("mutations %v: converted %v, want %v", mutations, in.converted, tt.converted)
				}
				res, err := e.result(again, config.Admission, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := summary(res.Findings), summary(first.Findings); !slices.Equal(got, want) {
					t.Errorf("mutations %v: remembered groups found %v, the evaluation %v", mutations, got, want)
				}
			}
		})
	}
}
