package policies

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/karpgate/karpgate/config"
)

// overlayWeightRule is a user rule about NodeOverlays (shared with the
// webhook and e2e tests), written as docs/own-rules.md says: for every
// kind, testing the kind itself.
const overlayWeightRule = "../test/testdata/rules/acme_overlay_weight.rego"

// poolTeamRule is a user rule about NodePools only; a NodeOverlay never
// reaches it.
const poolTeamRule = `# METADATA
# title: NodePool without a team
# description: Every NodePool names its team.
# custom:
#   id: ACME011
#   severity: deny
#   kinds: [NodePool]
#   fix: Add a team label.
package karpgate.rules.acme_pool_team

violation contains {"msg": "no team label", "path": "metadata.labels"} if {
	not input.object.metadata.labels.team
}
`

func overlay(spec, annotations map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.sh/v1alpha1",
		"kind":       "NodeOverlay",
		"metadata":   map[string]any{"name": "discount", "annotations": annotations},
		"spec":       spec,
	}
}

// A kind no rule names (NodeOverlay, karpenter.RuleOnlyKinds) is judged by
// the rules for every kind, users' own and the waiver rules, at every
// enforcement point and operation, memoized or not: lint and the
// validating webhook evaluate the same rules for it. Before, the engine's
// dispatch table had no entry for the kind and evaluated nothing.
func TestRulesForEveryKindJudgeRuleOnlyKinds(t *testing.T) {
	dir := t.TempDir()
	overlayRule, err := os.ReadFile(overlayWeightRule)
	if err != nil {
		t.Fatal(err)
	}
	for name, rule := range map[string]string{"overlay.rego": string(overlayRule), "pool.rego": poolTeamRule} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(rule), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	engines := map[string]*Engine{
		"memoized":   newTestEngine(t, Options{PolicyDirs: []string{dir}}),
		"every time": newTestEngine(t, Options{PolicyDirs: []string{dir}, evaluateEveryRuleEveryTime: true}),
	}
	weighted := map[string]any{"weight": int64(10), "priceAdjustment": "-10%"}
	unweighted := map[string]any{"priceAdjustment": "-10%"}
	tests := []struct {
		name   string
		req    Request
		want   []string
		waived []string
	}{
		{"lint, no weight", Request{Object: overlay(unweighted, nil), Point: config.CI, SkipCrossObject: true}, []string{"ACME010 deny spec.weight"}, nil},
		{"lint, weighted", Request{Object: overlay(weighted, nil), Point: config.CI, SkipCrossObject: true}, nil, nil},
		{"admission create, no weight", Request{Object: overlay(unweighted, nil), Point: config.Admission, Operation: Create}, []string{"ACME010 deny spec.weight"}, nil},
		{"admission update, no weight", Request{Object: overlay(unweighted, nil), OldObject: overlay(weighted, nil), Point: config.Admission, Operation: Update}, []string{"ACME010 deny spec.weight"}, nil},
		{"admission create, weighted", Request{Object: overlay(weighted, nil), Point: config.Admission, Operation: Create}, nil, nil},
		{"waived with a reason", Request{Object: overlay(unweighted, map[string]any{"karpgate.io/waive-ACME010": "ties are fine here"}), Point: config.Admission, Operation: Create}, nil, []string{"ACME010 deny spec.weight"}},
		// KG001, a built-in rule for every kind, judges the waiver itself.
		{"waiver without a reason", Request{Object: overlay(unweighted, map[string]any{"karpgate.io/waive-ACME010": ""}), Point: config.Admission, Operation: Create}, []string{"ACME010 deny spec.weight", "KG001 warn metadata.annotations[karpgate.io/waive-ACME010]"}, nil},
		{"mutations only", Request{Object: overlay(unweighted, nil), Point: config.Admission, Operation: Create, MutationsOnly: true}, nil, nil},
	}
	for engineName, engine := range engines {
		for _, tt := range tests {
			t.Run(engineName+"/"+tt.name, func(t *testing.T) {
				res, err := engine.Evaluate(context.Background(), tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if got := summary(res.Findings); !slices.Equal(got, tt.want) {
					t.Errorf("findings %q, want %q", got, tt.want)
				}
				if got := summary(res.Waived); !slices.Equal(got, tt.waived) {
					t.Errorf("waived %q, want %q", got, tt.waived)
				}
			})
		}
	}
}
