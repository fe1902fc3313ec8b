package rewrite

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/karpgate/karpgate/test/golden"
)

// FuzzConvertManifests: any input stream converts or fails with an error,
// never a panic, and converting what it wrote changes nothing more.
func FuzzConvertManifests(f *testing.F) {
	// The CLI's convert fixtures: real v1beta1 manifests with comments,
	// kubelet splits and malformed documents.
	for _, path := range golden.Glob(f, "../../cmd/karpgate/app/testdata/convert/*/*.yaml") {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
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
