package policies

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/test/benchratio"
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
// (every rule for the object's kind) per object at admission, with p50 and
// p99. The clock advances a second per evaluation, as it does between
// admission requests, so that nothing computed for one instant is reused
// for the next by accident. The baseline is converting the same object to
// Rego's representation, which an evaluation needs only when a rule is
// evaluated (the plain cases reuse remembered findings and convert
// nothing); x-baseline is the ratio of the means, x-baseline-p50 and -p99
// of the percentiles.
//
// The engine memoizes rules by the fields they read (budgets, AMI
// selection), which a repository's objects and an admission webhook's
// requests mostly repeat: the plain cases show that. The first-sight cases
// change those fields in every evaluation, so that nothing is ever reused:
// the cost of an object unlike any seen before. The new-node-counts case is
// in between: new budgets whose schedules are known.
func BenchmarkEvaluate(b *testing.B) {
	objects := benchObjects()
	updated := deepCopy(objects["NodePool"])
	updated["spec"].(map[string]any)["template"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"team": "web"}}
	pool, counted, class := deepCopy(objects["NodePool"]), deepCopy(objects["NodePool"]), deepCopy(objects["EC2NodeClass"])
	cases := []struct {
		name string
		req  Request
		// vary, when set, makes evaluation i see fields no other saw.
		vary func(i int)
	}{
		{"NodePool", Request{Object: objects["NodePool"], Operation: Create}, nil},
		{"EC2NodeClass", Request{Object: objects["EC2NodeClass"], Operation: Create}, nil},
		// An UPDATE that changes the hashed template: the update rules
		// compare the two objects.
		{"NodePool-update", Request{Object: updated, OldObject: objects["NodePool"], Operation: Update}, nil},
		{"NodePool-first-sight", Request{Object: pool, Operation: Create}, func(i int) {
			spec := pool["spec"].(map[string]any)
			budgets := spec["disruption"].(map[string]any)["budgets"].([]any)
			// A schedule and duration no earlier evaluation had (for the
			// first 950,400), all of them business-hours-like windows.
			schedule := strconv.Itoa(i%60) + " " + strconv.Itoa(i/60%24) + " * * mon-fri"
			duration := strconv.Itoa(60+i/1440%660) + "m"
			budgets[0] = map[string]any{"nodes": "0", "schedule": schedule, "duration": duration, "reasons": []any{"Drifted", "Underutilized"}}
			budgets[1] = map[string]any{"nodes": strconv.Itoa(i + 1), "reasons": []any{"Empty"}}
			spec["template"].(map[string]any)["spec"].(map[string]any)["nodeClassRef"] = map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "class-" + strconv.Itoa(i)}
		}},
		// A NodePool copied from another with node counts of its own: its
		// budgets are new, their schedules are not.
		{"NodePool-new-node-counts", Request{Object: counted, Operation: Create}, func(i int) {
			budgets := counted["spec"].(map[string]any)["disruption"].(map[string]any)["budgets"].([]any)
			budgets[1] = map[string]any{"nodes": strconv.Itoa(i + 1), "reasons": []any{"Empty"}}
		}},
		{"EC2NodeClass-first-sight", Request{Object: class, Operation: Create}, func(i int) {
			class["spec"].(map[string]any)["amiSelectorTerms"] = []any{map[string]any{"alias": "al2023@v" + strconv.Itoa(20240807+i)}}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			clock := fixedNow
			e := newTestEngine(b, Options{Now: func() time.Time { return clock }})
			c.req.Point = config.Admission
			baseline := timeLoop(b.N, func() {
				if _, err := ast.InterfaceToValue(c.req.Object); err != nil {
					b.Fatal(err)
				}
			})
			var latencies benchratio.Latencies
			evaluate := func() {
				if _, err := e.Evaluate(context.Background(), c.req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				clock = clock.Add(time.Second)
				if c.vary != nil {
					c.vary(i)
				}
				latencies.Time(evaluate)
			}
			b.StopTimer()
			reportRatio(b, baseline)
			latencies.Report(b, baseline/time.Duration(b.N))
		})
	}
}

func deepCopy(o map[string]any) map[string]any {
	raw, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
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
