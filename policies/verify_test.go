package policies

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestBuiltinRegoTests runs every `test_` rule shipped with the built-in
// rules, so `go test` fails when a Rego test does.
func TestBuiltinRegoTests(t *testing.T) {
	results, err := RunTests(context.Background(), TestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, r := range results {
		t.Run(r.Package+"."+r.Name, func(t *testing.T) {
			if !r.Passed {
				t.Fatalf("%s:%d: %s\n%s", r.File, r.Line, r.Error, r.Output)
			}
		})
		tested["data."+r.Package] = true
	}
	e := newTestEngine(t, Options{})
	for _, rule := range e.Catalog() {
		if !tested[rule.Package] {
			t.Errorf("rule %s (%s) has no Rego tests", rule.ID, rule.Package)
		}
	}
}

func TestRunTestsReportsPassingAndFailingSuites(t *testing.T) {
	results, err := RunTests(context.Background(), TestOptions{PolicyDirs: []string{"testdata/userpolicy/failing", "testdata/userpolicy/good"}, DataDirs: []string{"testdata/userdata"}, Run: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]TestResult{}
	for _, r := range results {
		if r.Builtin {
			t.Errorf("-run acme must filter out built-in tests, got %s", r.Name)
		}
		got[r.Package+"."+r.Name] = r
	}
	want := map[string]bool{
		"acme.checks.test_passes":                                       true,
		"acme.checks.test_fails":                                        false,
		"acme.checks.test_errors":                                       false,
		"karpgate.rules.acme_team_tag.test_missing_team":                true,
		"karpgate.rules.acme_team_tag.test_known_team":                  true,
		"karpgate.rules.acme_team_tag.test_custom_builtin_is_available": true,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %v", len(got), len(want), keys(got))
	}
	for name, pass := range want {
		r, ok := got[name]
		if !ok || r.Passed != pass {
			t.Errorf("%s: got %+v, want passed=%v", name, r, pass)
		}
	}
	if e := got["acme.checks.test_errors"].Error; !strings.Contains(e, "to_number") {
		t.Errorf("a builtin error must be reported, got %q", e)
	}
	if r := got["acme.checks.test_fails"]; r.File != "testdata/userpolicy/failing/failing_test.rego" || r.Line != 7 {
		t.Errorf("location: got %s:%d", r.File, r.Line)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
