package installed

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// Read's first judgement: the CRDs' release when it can read them, nil
// (the linked release) when they are absent or it may not read them.
func TestReadJudgesTheInstalledCRDsOrNothing(t *testing.T) {
	tests := []struct {
		name        string
		crds        []map[string]any
		forbidden   bool
		wantVersion string // "" wants nil
	}{
		{name: "v1.0.8's CRDs", crds: crdsOf(t, "karpenter-v1.0.8"), wantVersion: "v1.0.8"},
		{name: "v1.15.1's CRDs", crds: crdsOf(t, "karpenter-v1.15.1"), wantVersion: "v1.15.1"},
		{name: "no CRDs"},
		{name: "unreadable", crds: crdsOf(t, "karpenter-v1.15.1"), forbidden: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			for _, crd := range tt.crds {
				objs = append(objs, &unstructured.Unstructured{Object: crd})
			}
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{crdResource: "CustomResourceDefinitionList"}, objs...)
			if tt.forbidden {
				client.PrependReactor("get", "customresourcedefinitions", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(crdResource.GroupResource(), "nodepools.karpenter.sh", nil)
				})
			}
			w := &Watcher{client: client, source: "CRDs in cluster test"}
			w.Read(context.Background())
			got := w.Judged()
			switch {
			case tt.wantVersion == "" && got != nil:
				t.Errorf("judged %s, want the linked release (nil)", got)
			case tt.wantVersion != "" && (got == nil || got.Release.Version.String() != tt.wantVersion):
				t.Errorf("judged %v, want %s", got, tt.wantVersion)
			}
		})
	}
}
