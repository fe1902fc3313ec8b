package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/policies"
)

// TestBuiltinRegoTests runs every `test_` rule shipped with the built-in
// rules, so `go test` fails when a Rego test does.
func TestBuiltinRegoTests(t *testing.T) {
	results, err := Run(context.Background(), Options{})
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
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range catalog {
		if !tested[rule.Package] {
			t.Errorf("rule %s (%s) has no Rego tests", rule.ID, rule.Package)
		}
	}
}

func TestRunTestsReportsPassingAndFailingSuites(t *testing.T) {
	results, err := Run(context.Background(), Options{PolicyDirs: []string{"../testdata/userpolicy/failing", "../testdata/userpolicy/good"}, DataDirs: []string{"../testdata/userdata"}, Run: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
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
	if r := got["acme.checks.test_fails"]; r.File != "../testdata/userpolicy/failing/failing_test.rego" || r.Line != 7 {
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

// TestRunTestsRunsEachDefinitionOfARepeatedName: Rego ORs rules of the same
// name, so a failing second definition would hide behind a passing first
// one; each must run and report on its own, as `opa test` does. todo_test_
// rules are reported as skipped.
func TestRunTestsRunsEachDefinitionOfARepeatedName(t *testing.T) {
	dir := t.TempDir()
	src := `package acme.repeated

test_same if true

test_same if false

todo_test_later if false
`
	if err := os.WriteFile(filepath.Join(dir, "repeated_test.rego"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	results, err := Run(context.Background(), Options{PolicyDirs: []string{dir}, Run: `^data\.acme\.`})
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		name            string
		line            int
		passed, skipped bool
	}
	var got []outcome
	for _, r := range results {
		got = append(got, outcome{r.Name, r.Line, r.Passed, r.Skipped})
	}
	want := []outcome{
		{"test_same", 3, true, false},
		{"test_same#01", 5, false, false},
		{"todo_test_later", 7, true, true},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestRunTestsRefusesABadRunPattern(t *testing.T) {
	_, err := Run(context.Background(), Options{Run: "("})
	if err == nil || !strings.Contains(err.Error(), `--run "("`) {
		t.Fatalf("got %v", err)
	}
}
