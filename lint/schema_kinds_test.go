package lint

import (
	"context"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/devcluster/controlplane"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

const (
	overlayValid = `apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: discount}
spec:
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "-10%"
`
	overlayInvalid = `apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: unsigned}
spec:
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "10%"
`
	configMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: other}
data: {a: b}
`
)

// A kind of a Karpenter group that no rule is about (NodeOverlay) is still
// judged by the schema stage, so lint denies what the API server refuses;
// against CRDs that have its group but not the kind (v1.0.8's, before
// NodeOverlay) it is denied because the API server knows no such kind.
// Kinds of other groups stay skipped.
func TestKindsWithoutRulesAreJudgedByTheirGroupsCRDs(t *testing.T) {
	v108, err := controlplane.LoadCRDSets(context.Background(), crdsource.KarpenterV1_0_8)
	if err != nil {
		t.Fatal(err)
	}
	before, err := crdschema.New("Karpenter v1.0.8", v108)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, input string
		crds        *crdschema.Set
		want        string // "rule path" of the one deny finding; empty: none
		skipped     int
	}{
		{"valid NodeOverlay", overlayValid, linkedCRDs(t), "", 0},
		{"invalid NodeOverlay", overlayInvalid, linkedCRDs(t), "KG804 spec.priceAdjustment", 0},
		{"NodeOverlay the CRDs lack", overlayValid, before, "KG810 kind", 0},
		{"NodeOverlay without CRDs", overlayInvalid, nil, "", 1},
		{"another group's kind", configMap, linkedCRDs(t), "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(tt.input), Engine: engineFor(t, nil), CRDs: tt.crds})
			if err != nil {
				t.Fatal(err)
			}
			if r.Skipped != tt.skipped {
				t.Errorf("%d objects skipped, want %d", r.Skipped, tt.skipped)
			}
			var denials []string
			for _, f := range r.Findings() {
				if f.Action == "deny" {
					denials = append(denials, f.RuleID+" "+f.Path)
				}
			}
			if tt.want == "" && len(denials) > 0 || tt.want != "" && (len(denials) != 1 || denials[0] != tt.want) {
				t.Errorf("denials %q, want %q\n%s", denials, tt.want, describe(r))
			}
			if tt.want == "KG810 kind" && !strings.Contains(describe(r), "has no NodeOverlay in karpenter.sh") {
				t.Errorf("the denial does not say the CRDs lack the kind:\n%s", describe(r))
			}
		})
	}
}
