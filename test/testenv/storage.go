package testenv

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/wait"
)

// probeSpecs are the specs of minimal valid objects of each kind at each version,
// written to find out which version the API server stores.
var probeSpecs = map[string]map[string]any{
	karpenter.KindNodePool: {"template": map[string]any{"spec": map[string]any{
		"nodeClassRef": map[string]any{"name": "probe"}, "requirements": []any{}}}},
	karpenter.KindNodeClaim: {"nodeClassRef": map[string]any{"name": "probe"}, "requirements": []any{}},
	karpenter.KindEC2NodeClass: {"amiFamily": "AL2", "role": "probe",
		"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"probe": "true"}}},
		"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"probe": "true"}}}},
}

// SetStorageVersion makes version the storage version of kind's CRD, as an
// upgrade (or, backwards, a v0.3x install) does, and waits until the API
// server really stores new objects at it: it picks CRD changes up
// asynchronously. status.storedVersions gains the version, as in a cluster.
func (e *Env) SetStorageVersion(kind karpenter.Kind, version string) {
	e.t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := e.Client.Get(ctx, client.ObjectKey{Name: kind.CRDName()}, crd); err != nil {
		e.t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var ops []map[string]any
	for i, v := range versions {
		name, _ := v.(map[string]any)["name"].(string)
		ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/versions/%d/storage", i), "value": name == version})
	}
	patch, _ := json.Marshal(ops)
	if err := e.Client.Patch(ctx, crd, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		e.t.Fatalf("making %s the storage version of %s: %v", version, kind.CRDName(), err)
	}
	want := kind.Group + "/" + version
	probes := 0
	err := wait.Poll(wait.Patience, func() error {
		probe := &unstructured.Unstructured{Object: map[string]any{"spec": probeSpecs[kind.Kind]}}
		probe.SetAPIVersion(kind.Group + "/" + karpenter.V1Beta1)
		probe.SetKind(kind.Kind)
		probe.SetName(fmt.Sprintf("storage-probe-%d", probes))
		probes++
		if err := e.Client.Create(ctx, probe); err != nil {
			return fmt.Errorf("creating a %s probe: %w", kind.Kind, err)
		}
		got, _ := e.StoredAPIVersion(kind.Group, kind.Resource, probe.GetName())
		if err := e.Client.Delete(ctx, probe); err != nil {
			return fmt.Errorf("deleting the %s probe: %w", kind.Kind, err)
		}
		if got != want {
			return fmt.Errorf("the API server still stores %s at %s, not %s", kind.Kind, got, want)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}
