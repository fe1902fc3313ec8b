package policies

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/config"
)

// TestBuiltinRuleLayout keeps the built-in rules findable: a rule in
// rules/<folder>/<file>.rego is package karpgate.rules.<folder>_<file>, its
// Rego tests sit beside it in <file>_test.rego, and unless it runs only at
// admission (where webhook/admission tests it) it has a failing and a
// passing manifest under testdata/rules/<ID>/ for lint's fixture test.
func TestBuiltinRuleLayout(t *testing.T) {
	catalog, err := BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(catalog) == 0 {
		t.Fatal("no built-in rules")
	}
	for _, rule := range catalog {
		t.Run(rule.ID, func(t *testing.T) {
			file := strings.TrimPrefix(rule.File, BuiltinFilePrefix) // rules/<folder>/<file>.rego
			folder := path.Base(path.Dir(file))
			stem := strings.TrimSuffix(path.Base(file), ".rego")
			if want := "data.karpgate.rules." + folder + "_" + stem; rule.Package != want {
				t.Errorf("%s is package %s; name it %s", file, rule.Package, strings.TrimPrefix(want, "data."))
			}
			if _, err := builtinRules.ReadFile(strings.TrimSuffix(file, ".rego") + "_test.rego"); err != nil {
				t.Errorf("%s has no Rego tests beside it: %v", file, err)
			}
			if !rule.RunsAt(config.CI) {
				return
			}
			for _, fixture := range []string{"fail.yaml", "pass.yaml"} {
				if _, err := os.Stat(filepath.Join("testdata", "rules", rule.ID, fixture)); err != nil {
					t.Errorf("%s runs in CI and needs testdata/rules/%s/%s: %v", rule.ID, rule.ID, fixture, err)
				}
			}
		})
	}
}
