package rewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubeletIsNeverDroppedOnAMalformedNodeClass: moving a NodePool's
// kubelet into an EC2NodeClass whose spec is not an object must fail the
// conversion, naming the object, instead of removing the kubelet from the
// NodePool and writing it nowhere.
func TestKubeletIsNeverDroppedOnAMalformedNodeClass(t *testing.T) {
	input := `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        name: broken
      kubelet:
        maxPods: 42
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: broken
spec: []
`
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	result, err := Convert(context.Background(), []string{path}, nil)
	var objectErrs ObjectErrors
	if !errors.As(err, &objectErrs) {
		t.Fatalf("got result %+v and error %v; want ObjectErrors", result, err)
	}
	for _, want := range []string{"in.yaml:", "EC2NodeClass broken", "spec.kubelet", "fix the object's shape"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
