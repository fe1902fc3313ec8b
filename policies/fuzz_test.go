package policies

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
)

var (
	fuzzEngineOnce sync.Once
	fuzzEngine     *Engine
)

// FuzzEvaluate feeds arbitrary manifests to the built-in rules, as the
// admission webhook will: whatever the object holds, evaluation must not
// panic or fail. Each object is also tried as every Karpenter kind and
// version so that malformed fields reach every rule. The seed corpus is
// every rule fixture.
func FuzzEvaluate(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/rules/*/*.yaml")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data, true)
		}
	}
	f.Add([]byte(`{"spec": {"disruption": {"budgets": [{"nodes": 3, "schedule": ["x"], "duration": {}}]}}}`), false)
	f.Add([]byte("spec:\n  amiSelectorTerms: [{alias: 7}, \"x\", {alias: \"@\"}]\nmetadata:\n  annotations: {karpgate.io/waive-: 1}\n"), true)
	f.Add([]byte("spec:\n  disruption:\n    budgets:\n      - {nodes: \"1\", schedule: \"* * * * *\", duration: 1m}\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, production bool) {
		fuzzEngineOnce.Do(func() {
			var err error
			fuzzEngine, err = New(context.Background(), Options{Now: func() time.Time { return fixedNow }})
			if err != nil {
				panic(err)
			}
		})
		objects, err := manifest.ReadAll([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			return // not a manifest: lint reports parse errors before evaluating
		}
		contents := make([]map[string]any, 0, len(objects))
		for _, o := range objects {
			contents = append(contents, o.Content)
		}
		inventory, err := NewInventory(contents)
		if err != nil {
			t.Fatalf("inventory: %v", err)
		}
		for _, o := range contents {
			for _, kind := range []string{"NodePool", "EC2NodeClass", "NodeClaim"} {
				for _, api := range []string{"karpenter.sh/v1", "karpenter.k8s.aws/v1beta1"} {
					o["kind"], o["apiVersion"] = kind, api
					if production {
						o["metadata"] = map[string]any{"name": "fuzz", "labels": map[string]any{"karpgate.io/environment": "production"}}
					}
					if _, err := fuzzEngine.Evaluate(context.Background(), Request{Object: o, Inventory: inventory, Point: config.Admission}); err != nil {
						t.Fatalf("%s %s: %v", api, kind, err)
					}
				}
			}
		}
	})
}
