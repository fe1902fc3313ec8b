package app

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// The reasons status and explain use come from the NodePool CRD Karpenter
// itself publishes: v1.0.8's has three, v1.15.1's four.
func TestBudgetReasonsOfKarpentersOwnCRDs(t *testing.T) {
	for set, want := range map[crdsource.Set][]budget.Reason{
		crdsource.KarpenterV1_0_8:  {budget.Underutilized, budget.Empty, budget.Drifted},
		crdsource.KarpenterV1_15_1: budget.Reasons,
	} {
		files, err := crdsource.Files(context.Background(), set)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range files {
			var crd map[string]any
			if err := yaml.Unmarshal(f.Data, &crd); err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			if name, _, _ := unstructured.NestedString(crd, "metadata", "name"); name != "nodepools.karpenter.sh" {
				continue
			}
			found = true
			if got := budget.ReasonsOfCRD(crd); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: reasons %v, want %v", set, got, want)
			}
		}
		if !found {
			t.Errorf("%s has no NodePool CRD", set)
		}
	}
	if got := budget.ReasonsOfCRD(map[string]any{"spec": map[string]any{}}); got != nil {
		t.Errorf("a CRD without versions gives %v", got)
	}
}
