package preflight

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/karpgate/karpgate/migration/kubeletfix"
	"github.com/karpgate/karpgate/migration/snapshot"
	"github.com/karpgate/karpgate/test/golden"
)

// FuzzPreflight: whatever the files hold, reading them, planning the kubelet
// move and checking them for every target never panics, and the report
// always writes.
func FuzzPreflight(f *testing.F) {
	for _, path := range golden.Glob(f, filepath.Join("testdata", "*", "*.yaml")) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: "[1]"}, managedFields: [7, {apiVersion: karpenter.sh/v1beta1}]}, spec: {template: {spec: {nodeClassRef: []}}}}`))
	f.Add([]byte(`{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: nodepools.karpenter.sh}, spec: {versions: 3, conversion: {strategy: Webhook, webhook: {clientConfig: {url: "%zz"}}}}, status: {storedVersions: [1]}}`))
	f.Add([]byte(`{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: c, annotations: {karpgate.io/restore-v1beta1: "{", compatibility.karpenter.k8s.aws/v1beta1-ubuntu: incompatible}}, spec: {kubelet: 1, amiSelectorTerms: x}}`))
	targets := []Target{mustParse(f, "v1.0.0"), mustParse(f, "v1.1.0")}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := snapshot.FromFiles([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			return
		}
		kubeletfix.PlanFor(s).Steps()
		running, err := DetectRunning(s, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, live := range []bool{false, true} {
			s.Live = live
			for _, target := range targets {
				r := Run(s, running, target)
				if err := WriteText(io.Discard, r); err != nil {
					t.Fatal(err)
				}
				if err := WriteJSON(io.Discard, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func mustParse(f *testing.F, s string) Target {
	t, err := ParseTarget(s)
	if err != nil {
		f.Fatal(err)
	}
	return t
}
