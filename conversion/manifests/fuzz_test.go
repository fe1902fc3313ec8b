package manifests

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConvertManifests: any input stream converts or fails with an error,
// never a panic, and converting what it wrote changes nothing more.
func FuzzConvertManifests(f *testing.F) {
	seeds, _ := filepath.Glob("../../internal/cli/testdata/convert/*/*.yaml")
	for _, path := range seeds {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {kubelet: {maxPods: 1}, nodeClassRef: {name: c}}}}\n---\napiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {amiFamily: AL2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Convert(context.Background(), []string{"-"}, bytes.NewReader(data))
		if err != nil {
			return
		}
		out := r.Files[0].Output
		again, err := Convert(context.Background(), []string{"-"}, bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the output does not convert again: %v\n%s", err, out)
		}
		if again.Files[0].Changed {
			t.Fatalf("converting the output changes it again:\n%s\n%v", out, again.Changes)
		}
	})
}
