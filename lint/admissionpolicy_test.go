package lint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
)

// TestAdmissionPolicyFindsWhatTheRulesFind lints each twinned rule's
// fixtures by the rules and by the twins alone (--engine vap): every
// finding of a twinned rule that the rules report, the twins report too,
// at the same place with the same message, fix and action, and nothing
// else. test/twins compares the verdicts on far more objects; this checks
// that lint reads the policy's messages back into the findings they were.
func TestAdmissionPolicyFindsWhatTheRulesFind(t *testing.T) {
	const root = "../policies/testdata/rules"
	twins, err := twin.LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	schema, twinned := schemaRuleIDs(catalog), map[string]bool{}
	for _, id := range twin.IDs(twins) {
		twinned[id] = true
	}
	// A policy costs seconds to compile (a minute under the race
	// detector): one, for the default karpgate.yaml; test/twins judges the
	// fixtures' own karpgate.yaml files and other configurations.
	engine := engineFor(t, config.Default())
	policy, err := NewAdmissionPolicy(engine)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, tw := range twins {
		dir := filepath.Join(root, tw.ID())
		if _, err := os.Stat(dir); err != nil || !tw.Rule.RunsAt(config.CI) {
			continue // an update or admission-only rule: test/twins judges it
		}
		if _, err := os.Stat(filepath.Join(dir, "karpgate.yaml")); err == nil {
			continue // judged with a karpgate.yaml of its own
		}
		t.Run(tw.ID(), func(t *testing.T) {
			for _, name := range []string{"fail", "pass"} {
				inputs := []string{filepath.Join(dir, name+".yaml"), filepath.Join(root, "common.yaml")}
				rego, err := Run(context.Background(), Options{Inputs: inputs, Engine: engine, CRDs: linkedCRDs(t)})
				if err != nil {
					t.Fatal(err)
				}
				vap, err := Run(context.Background(), Options{Inputs: inputs, Engine: engine, CRDs: linkedCRDs(t), AdmissionPolicy: policy})
				if err != nil {
					t.Fatal(err)
				}
				if vap.Engine != EngineAdmissionPolicy || rego.Engine != EngineRego {
					t.Errorf("engines %q and %q", rego.Engine, vap.Engine)
				}
				// The schema runs first in both; an object it denies meets no
				// policy in the API server, so only the others are compared.
				refused := schemaRefused(vap, schema)
				want, got := twinFindings(rego, twinned, refused), twinFindings(vap, twinned, refused)
				if got != want {
					t.Errorf("%s.yaml: the twins found\n%s\nthe rules found\n%s", name, got, want)
				}
				if name == "fail" {
					for _, f := range rego.Findings() {
						if f.RuleID == tw.ID() && !refused[objectKey(f)] && !strings.Contains(got, " "+tw.ID()+" ") {
							t.Errorf("fail.yaml: the twin of %s found nothing on %s\n%s", tw.ID(), f.Object.Ref(), describe(vap))
						}
					}
				}
				compared++
			}
		})
	}
	if compared == 0 {
		t.Fatal("no fixture compared: are the fixtures still under " + root + "?")
	}
}

// schemaRefused are the objects of r that a rule of schema denies: the
// API server refuses them before any policy runs.
func schemaRefused(r *Report, schema map[string]bool) map[string]bool {
	refused := map[string]bool{}
	for _, f := range r.Findings() {
		if schema[f.RuleID] && f.Action == config.Deny {
			refused[objectKey(f)] = true
		}
	}
	return refused
}

func objectKey(f Located) string { return f.File + " " + f.Object.Ref() }

// twinFindings are the active findings of the rules in twinned on the
// objects not refused, one per line, with everything lint shows of them.
func twinFindings(r *Report, twinned, refused map[string]bool) string {
	var b strings.Builder
	for _, f := range r.Findings() {
		if twinned[f.RuleID] && !refused[objectKey(f)] {
			fmt.Fprintf(&b, "%s:%d:%d %s %s %s %s: %s (fix: %s)\n", filepath.Base(f.File), f.Line, f.Column, f.Action, f.RuleID, f.Object.Ref(), f.Path, f.Message, f.Fix)
		}
	}
	return b.String()
}

func TestSplitAndParseFindings(t *testing.T) {
	tests := []struct {
		msg  string
		want []string
	}{
		{`KG101 spec.amiSelectorTerms[0].alias: alias "a@latest" follows (fix: Pin it)`, []string{`spec.amiSelectorTerms[0].alias|alias "a@latest" follows|Pin it`}},
		{"KG109 spec.a[0]: one (fix: x) | KG109 spec.a[1]: two | three (fix: y)", []string{"spec.a[0]|one|x", "spec.a[1]|two | three|y"}},
		{"KG002: a message without a path", []string{"|a message without a path|"}},
		{"KG206 spec.b: note (fix: a) (fix: b)", []string{"spec.b|note (fix: a)|b"}},
	}
	for _, tt := range tests {
		id, _, _ := strings.Cut(tt.msg, " ")
		id = strings.TrimSuffix(id, ":")
		var got []string
		for _, piece := range splitFindings(id, tt.msg) {
			path, msg, fix := parseFinding(id, piece)
			got = append(got, path+"|"+msg+"|"+fix)
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%q:\ngot  %q\nwant %q", tt.msg, got, tt.want)
		}
	}
}
