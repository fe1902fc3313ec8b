package conversion

import "testing"

func TestV1Beta1Path(t *testing.T) {
	nodePool := map[string]any{"kind": "NodePool"}
	nodeClaim := map[string]any{"kind": "NodeClaim"}
	classFromFamily := map[string]any{"kind": "EC2NodeClass", "spec": map[string]any{"amiFamily": "AL2023"}}
	classWithTerms := map[string]any{"kind": "EC2NodeClass", "spec": map[string]any{"amiFamily": "AL2023", "amiSelectorTerms": []any{map[string]any{"id": "ami-1"}}}}
	tests := []struct {
		obj        map[string]any
		v1, v1beta string
	}{
		{nodePool, "spec.template.spec.expireAfter", "spec.disruption.expireAfter"},
		{nodePool, "spec.template.spec.nodeClassRef.group", "spec.template.spec.nodeClassRef.apiVersion"},
		{nodePool, "spec.template.spec.nodeClassRef.name", "spec.template.spec.nodeClassRef.name"},
		{nodePool, "spec.template.spec.expireAfterX", "spec.template.spec.expireAfterX"}, // a prefix of a name is not a move
		{nodePool, "metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]", "spec.template.spec.kubelet"},
		{nodePool, "spec.disruption.budgets[0].nodes", "spec.disruption.budgets[0].nodes"},
		{nodeClaim, "spec.nodeClassRef.group", "spec.nodeClassRef.apiVersion"},
		{nodeClaim, "spec.expireAfter", "spec.expireAfter"},
		{classFromFamily, "spec.amiSelectorTerms[0].alias", "spec.amiFamily"},
		{classWithTerms, "spec.amiSelectorTerms[0].id", "spec.amiSelectorTerms[0].id"},
	}
	for _, tt := range tests {
		if got := V1Beta1Path(tt.obj, tt.v1); got != tt.v1beta {
			t.Errorf("%v %s: got %s, want %s", tt.obj["kind"], tt.v1, got, tt.v1beta)
		}
	}
}
