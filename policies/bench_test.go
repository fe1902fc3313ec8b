package policies

import (
	"context"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
)

// benchObjects are typical objects: a NodePool with the business-hours
// budgets from Karpenter's docs and a production EC2NodeClass.
func benchObjects() map[string]map[string]any {
	return map[string]map[string]any{
		"NodePool": {
			"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": "business-hours"},
			"spec": map[string]any{
				"template": map[string]any{"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
					"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}}},
				}},
				"disruption": map[string]any{
					"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m",
					"budgets": []any{
						map[string]any{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": []any{"Drifted", "Underutilized"}},
						map[string]any{"nodes": "100%", "reasons": []any{"Empty"}},
					},
				},
			},
		},
		"EC2NodeClass": nodeClass(production, map[string]any{"karpgate.io/waive-KG103": "tested"}, "al2023@v20240807"),
	}
}

// BenchmarkEvaluate measures one evaluation of the whole built-in rule set
// (every rule for the object's kind, in one prepared query) per object.
// The baseline is converting the same object to Rego's representation,
// which every evaluation starts with; x-baseline is the ratio.
func BenchmarkEvaluate(b *testing.B) {
	e := newTestEngine(b, Options{})
	for kind, obj := range benchObjects() {
		b.Run(kind, func(b *testing.B) {
			baseline := timeLoop(b.N, func() {
				if _, err := ast.InterfaceToValue(obj); err != nil {
					b.Fatal(err)
				}
			})
			req := Request{Object: obj, Point: config.Admission}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Evaluate(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportRatio(b, baseline)
		})
	}
}

// timeLoop runs fn n times and returns how long that took: the baseline,
// measured in the same run as the benchmark it is compared with.
// (testing.Benchmark cannot nest inside a running benchmark.)
func timeLoop(n int, fn func()) time.Duration {
	start := time.Now()
	for i := 0; i < n; i++ {
		fn()
	}
	return time.Since(start)
}

func reportRatio(b *testing.B, baseline time.Duration) {
	b.ReportMetric(float64(baseline.Nanoseconds())/float64(b.N), "baseline-ns/op")
	b.ReportMetric(float64(b.Elapsed())/float64(baseline), "x-baseline")
}
