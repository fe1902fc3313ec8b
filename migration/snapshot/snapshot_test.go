package snapshot

import (
	"strings"
	"testing"
)

func TestFromFilesSortsWhatItReads(t *testing.T) {
	input := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nodepools.karpenter.sh}
spec: {versions: [{name: v1, served: true, storage: true}, {name: v1beta1, served: true}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.cert-manager.io}
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: old}
---
apiVersion: v1
kind: List
items:
  - {apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: {name: c}}
  - {apiVersion: admissionregistration.k8s.io/v1, kind: MutatingWebhookConfiguration, metadata: {name: m}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: x}
`
	s, err := FromFiles([]string{"-"}, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if s.Live || len(s.CRDs) != 1 || len(s.NodePools()) != 1 || len(s.NodeClaims()) != 1 || len(s.Webhooks) != 1 || len(s.EC2NodeClasses()) != 0 {
		t.Fatalf("read %d CRDs, %d NodePools, %d NodeClaims, %d webhooks", len(s.CRDs), len(s.NodePools()), len(s.NodeClaims()), len(s.Webhooks))
	}
	if where := s.NodePools()[0].Where(); where != "<stdin>:11" {
		t.Errorf("NodePool read at %q", where)
	}
	if v, ok := ReadableVersion(s.CRDs[0].Content); !ok || v != "v1" {
		t.Errorf("readable version %q %v", v, ok)
	}
	if _, err := FromFiles([]string{"-"}, strings.NewReader("a: [")); err == nil {
		t.Error("a file that does not parse is not an error")
	}
}
