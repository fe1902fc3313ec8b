package clusterread

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDocumentIsWhatKubectlShows: keys sorted, managedFields left out,
// named as kubectl names the object.
func TestDocumentIsWhatKubectlShows(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"kind": "NodePool", "apiVersion": "karpenter.sh/v1",
		"spec":     map[string]any{"weight": int64(10)},
		"metadata": map[string]any{"name": "web", "managedFields": []any{map[string]any{"manager": "kubectl"}}},
	}}
	d, err := Document(u)
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: web\nspec:\n  weight: 10\n"
	if d.Name != "nodepool.karpenter.sh/web" || string(d.Data) != want {
		t.Errorf("%s:\n%s\nwant nodepool.karpenter.sh/web:\n%s", d.Name, d.Data, want)
	}
	if _, kept := u.Object["metadata"].(map[string]any)["managedFields"]; !kept {
		t.Error("Document changed the object it was given")
	}
}
