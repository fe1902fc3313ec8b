package installed

import (
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// readCluster answers as the watcher judges, and tells a cluster it could
// not ask (an error) from CRDs it cannot judge (serve goes on with the
// linked release: JudgeErr).
func TestReadClusterJudgesAsTheWatcher(t *testing.T) {
	broken := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "nodepools.karpenter.sh"}, "spec": "not a CRD spec"}
	tests := []struct {
		name         string
		crds         []map[string]any
		forbidden    bool
		wantVersion  string // "" wants no judgement
		wantCRDs     []string
		wantJudgeErr bool
		wantErr      string
	}{
		{name: "v1.0.8's CRDs", crds: crdsOf(t, "karpenter-v1.0.8"), wantVersion: "v1.0.8",
			wantCRDs: []string{"ec2nodeclasses.karpenter.k8s.aws", "nodeclaims.karpenter.sh", "nodepools.karpenter.sh"}},
		{name: "v1.15.1's CRDs", crds: crdsOf(t, "karpenter-v1.15.1"), wantVersion: "v1.15.1", wantCRDs: CRDNames()},
		{name: "no CRDs"},
		{name: "a CRD karpgate cannot judge", crds: []map[string]any{broken}, wantCRDs: []string{"nodepools.karpenter.sh"}, wantJudgeErr: true},
		{name: "not allowed to get them", crds: crdsOf(t, "karpenter-v1.15.1"), forbidden: true, wantErr: "reading the Karpenter CRDs of https://test: getting CustomResourceDefinition ec2nodeclasses.karpenter.k8s.aws: "},
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
					return true, nil, apierrors.NewForbidden(crdResource.GroupResource(), "ec2nodeclasses.karpenter.k8s.aws", nil)
				})
			}
			// A kubeconfig's server may end in "/": the cluster is named without it.
			got, err := readCluster(context.Background(), client, "https://test/")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Host != "https://test" || !slices.Equal(got.CRDs, tt.wantCRDs) || (got.JudgeErr != nil) != tt.wantJudgeErr {
				t.Errorf("got host %s, CRDs %v, judge error %v; want CRDs %v, judge error %v", got.Host, got.CRDs, got.JudgeErr, tt.wantCRDs, tt.wantJudgeErr)
			}
			switch {
			case tt.wantVersion == "" && got.Judged != nil:
				t.Errorf("judged %s, want none", got.Judged)
			case tt.wantVersion != "" && (got.Judged == nil || got.Judged.Release.Version.String() != tt.wantVersion || got.Judged.Source != "CRDs in cluster https://test"):
				t.Errorf("judged %v, want %s from CRDs in cluster https://test", got.Judged, tt.wantVersion)
			}
		})
	}
}
