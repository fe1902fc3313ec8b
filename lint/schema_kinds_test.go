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
	bufferValid = `apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: spare, namespace: team-a}
spec:
  podTemplateRef: {name: spare-shape}
  replicas: 3
`
	// provisioningRequest is Cluster Autoscaler's kind, in the group
	// Karpenter's CapacityBuffer shares.
	provisioningRequest = `apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata: {name: batch, namespace: team-a}
spec: {podSets: [{podTemplateRef: {name: worker}, count: 4}], provisioningClassName: check-capacity.autoscaling.x-k8s.io}
`
	configMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: other}
data: {a: b}
`
)

// A kind of a Karpenter group that no rule is about (NodeOverlay,
// CapacityBuffer) is still judged by the schema stage, so lint denies what
// the API server refuses; against CRDs that have its group but not the kind
// (v1.0.8's, before NodeOverlay) it is denied because the API server knows
// no such kind. Kinds of other groups stay skipped, and so does a
// CapacityBuffer against CRDs without its group (v1.0.8's): such a set says
// nothing of autoscaling.x-k8s.io, as of any group it lacks. Karpenter
// shares that group with Cluster Autoscaler, so the linked CRDs judge only
// CapacityBuffer there, not every kind of it.
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
		{"valid CapacityBuffer", bufferValid, linkedCRDs(t), "", 0},
		{"CapacityBuffer with negative replicas", strings.Replace(bufferValid, "replicas: 3", "replicas: -3", 1), linkedCRDs(t), "KG805 spec.replicas", 0},
		{"CapacityBuffer with an unknown field", bufferValid + "  colour: blue\n", linkedCRDs(t), "KG807 spec.colour", 0},
		{"CapacityBuffer breaking a CEL rule", bufferValid + "  scalableRef: {kind: Deployment, name: web}\n", linkedCRDs(t), "KG806 spec", 0},
		{"CapacityBuffer at a version the CRDs do not serve", strings.Replace(bufferValid, "v1beta1", "v1alpha1", 1), linkedCRDs(t), "KG810 apiVersion", 0},
		{"CapacityBuffer without CRDs", bufferValid, nil, "", 1},
		{"CapacityBuffer against CRDs without its group", strings.Replace(bufferValid, "replicas: 3", "replicas: -3", 1), before, "", 1},
		{"another kind of CapacityBuffer's group", provisioningRequest, linkedCRDs(t), "", 1},
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
