package karpentere2e

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// legacyNodePool is a NodePool as written for Karpenter v1beta1, on the
// simulated nodes: nodeClassRef by apiVersion, expireAfter under
// disruption, WhenEmpty with its consolidateAfter.
const legacyNodePool = `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: legacy-kwok
spec:
  template:
    metadata:
      labels:
        release: v1beta1
    spec:
      nodeClassRef:
        apiVersion: karpenter.kwok.sh/v1alpha1
        kind: KWOKNodeClass
        name: default
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: [c-1x-amd64-linux]
        - key: karpenter.sh/capacity-type
          operator: In
          values: [on-demand]
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    expireAfter: 720h
    budgets:
      - nodes: "20%"
`

// TestKarpenterProvisionsFromAV1beta1NodePool applies a v1beta1 NodePool
// while Karpenter v1.0.8 runs, the last release whose CRDs serve v1beta1.
// The API server stores v1 through karpgate's conversion, Karpenter (a v1
// client) launches a node from it, and a v1beta1 read gives back what was
// applied.
func TestKarpenterProvisionsFromAV1beta1NodePool(t *testing.T) {
	t.Parallel()
	c, env := cluster(t, karpenterstack.V1_0_8)
	if warnings := apply(t, env, legacyNodePool, deploymentYAML("legacy-kwok", 1)); !strings.Contains(warnings, "KG401") {
		t.Errorf("applying a v1beta1 NodePool gave no KG401 warning:\n%s", warnings)
	}
	waitLaunched(t, c, env, "legacy-kwok", 1)

	claims, err := nodeClaims(env, "legacy-kwok")
	if err != nil || len(claims) != 1 {
		t.Fatalf("NodeClaims of legacy-kwok: %d, %v", len(claims), err)
	}
	ref, _, _ := unstructured.NestedStringMap(claims[0].Object, "spec", "nodeClassRef")
	if want := map[string]string{"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}; !reflect.DeepEqual(ref, want) {
		t.Errorf("Karpenter launched with nodeClassRef %v, want %v", ref, want)
	}
	v1 := readNodePool(t, env.Client, karpenter.V1, "legacy-kwok")
	if _, ok := v1.GetAnnotations()[karpenter.NodePoolHashAnnotation]; !ok {
		t.Errorf("Karpenter did not hash the NodePool it read as v1: annotations %v", v1.GetAnnotations())
	}
	if got, _, _ := unstructured.NestedString(v1.Object, "spec", "template", "spec", "expireAfter"); got != "720h" {
		t.Errorf("read as v1, expireAfter is %q under spec.template.spec, want 720h", got)
	}

	var applied map[string]any
	if err := yaml.Unmarshal([]byte(legacyNodePool), &applied); err != nil {
		t.Fatal(err)
	}
	beta := readNodePool(t, env.Client, karpenter.V1Beta1, "legacy-kwok")
	if !reflect.DeepEqual(beta.Object["spec"], applied["spec"]) {
		got, _ := json.MarshalIndent(beta.Object["spec"], "", "  ")
		want, _ := json.MarshalIndent(applied["spec"], "", "  ")
		t.Errorf("a v1beta1 read does not give the applied spec back:\ngot  %s\nwant %s", got, want)
	}
	for key := range beta.GetAnnotations() {
		if strings.HasPrefix(key, "compatibility.karpenter.sh/") || strings.HasPrefix(key, "karpgate.io/") {
			t.Errorf("a v1beta1 read shows conversion bookkeeping: annotation %s", key)
		}
	}
}

func readNodePool(t *testing.T, c client.Client, version, name string) *unstructured.Unstructured {
	t.Helper()
	np := &unstructured.Unstructured{}
	np.SetAPIVersion(karpenter.CoreGroup + "/" + version)
	np.SetKind(karpenter.KindNodePool)
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatalf("reading NodePool %s as %s: %v", name, version, err)
	}
	return np
}
