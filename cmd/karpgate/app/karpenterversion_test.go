package app

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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

// status and explain take their reasons as karpgate serve's loop does when
// karpgate.yaml names a release: --karpenter-version first, then --config's
// karpenterVersion, then the cluster's NodePool CRD.
func TestReasonsFollowTheConfiguredRelease(t *testing.T) {
	files, err := crdsource.Files(context.Background(), crdsource.KarpenterV1_15_1)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	for _, f := range files {
		if err := yaml.Unmarshal(f.Data, &crd.Object); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if crd.GetName() == budget.NodePoolCRDName {
			break
		}
	}
	cluster := fake.NewClientBuilder().WithObjects(crd).Build()
	dir := t.TempDir()
	pinned := filepath.Join(dir, "pinned.yaml")
	plain := filepath.Join(dir, "plain.yaml")
	for path, body := range map[string]string{
		pinned: "apiVersion: karpgate.io/v1alpha1\nkind: Config\nkarpenterVersion: v1.14\n",
		plain:  "apiVersion: karpgate.io/v1alpha1\nkind: Config\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	withoutUnhealthy := []budget.Reason{budget.Underutilized, budget.Empty, budget.Drifted}
	tests := []struct {
		name, flag, config string
		want               []budget.Reason
		wantSource         string
	}{
		{"the cluster's CRD", "", "", budget.Reasons, "the cluster's NodePool CRD"},
		{"a config without a release", "", plain, budget.Reasons, "the cluster's NodePool CRD"},
		{"the config's release", "", pinned, withoutUnhealthy, pinned + " karpenterVersion v1.14"},
		{"the flag over the config", "v1.15", pinned, budget.Reasons, "--karpenter-version v1.15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := karpenterFlag{version: tt.flag}
			got, source, err := k.reasons(context.Background(), cluster, tt.config)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) || source != tt.wantSource {
				t.Errorf("reasons %v from %q, want %v from %q", got, source, tt.want, tt.wantSource)
			}
		})
	}
	k := karpenterFlag{}
	if _, _, err := k.reasons(context.Background(), cluster, filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing --config file is not an error")
	}
}
