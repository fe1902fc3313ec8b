package memo

import (
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
)

// annotationsGroup is the group of one rule that reads an object's
// annotations, which objects share like any other content.
func annotationsGroup(t *testing.T) *Group {
	t.Helper()
	c := ast.MustCompileModules(map[string]string{"rule.rego": `package karpgate.rules.notes

violation contains {"msg": "noted"} if input.object.metadata.annotations.note != ""
`})
	rules := c.GetRulesExact(ast.MustParseRef("data.karpgate.rules.notes.violation"))
	groups, ids := Groups(c, []Candidate{{Violation: rules, Applies: func(config.EnforcementPoint, string) bool { return true }}}, []string{"NodePool"})
	if len(groups) != 1 || ids[0] != groups[0].ID {
		t.Fatalf("groups %v, ids %v: the rule reads content only and must be memoized", groups, ids)
	}
	return groups[0]
}

// A remembered group is answered from the request's Go values, never
// converting them; a key longer than MaxKeyBytes is never remembered, so
// such an input is evaluated every time.
func TestMemoRemembersShortKeysFromGoValues(t *testing.T) {
	g := annotationsGroup(t)
	m := New[[]string](budgetfuncs.NewCache())
	for _, tt := range []struct {
		name       string
		note       string
		remembered bool
	}{
		{"short", "x", true},
		{"long", strings.Repeat("x", MaxKeyBytes), false},
	} {
		object := map[string]any{"kind": "NodePool", "metadata": map[string]any{"annotations": map[string]any{"note": tt.note}}}
		in := Input{Go: map[string]any{"object": object, "enforcementPoint": "admission"}, Object: object}
		conversions, evaluations := 0, 0
		in.Rego = func() (ast.Object, ast.Value, error) {
			conversions++
			v := ast.MustInterfaceToValue(in.Go).(ast.Object)
			return v, v.Get(ast.StringTerm("object")).Value, nil
		}
		evaluate := func(reduced ast.Object) ([]string, error) {
			evaluations++
			return []string{reduced.String()}, nil
		}
		for range 2 {
			if _, err := m.Violations(g, in, time.Time{}, evaluate); err != nil {
				t.Fatal(err)
			}
		}
		if want := map[bool]int{true: 1, false: 2}[tt.remembered]; evaluations != want || conversions != want {
			t.Errorf("%s: %d evaluations and %d conversions, want %d of each", tt.name, evaluations, conversions, want)
		}
		for _, k := range m.Keys() {
			if len(k) > MaxKeyBytes {
				t.Errorf("%s: a key of %d bytes was remembered, over the %d-byte bound", tt.name, len(k), MaxKeyBytes)
			}
		}
	}
}
