package budgetfuncs

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/karpgate/karpgate/budget"
)

// TestAnalysisFollowsTheCachesReasons: karpgate.budgets.analyze answers for
// the reasons of the Karpenter release the cache was made for, so a budget
// without reasons covers Unhealthy only from v1.15 on.
func TestAnalysisFollowsTheCachesReasons(t *testing.T) {
	pool := map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"spec": map[string]any{"disruption": map[string]any{"budgets": []any{
			map[string]any{"nodes": "1", "schedule": "0 2 * * *", "duration": "2h"},
		}}},
	}
	now := time.Date(2025, 1, 6, 10, 0, 0, 0, time.UTC).UnixNano()
	for _, version := range []string{"v1.14", "v1.15"} {
		t.Run(version, func(t *testing.T) {
			reasons, err := budget.ReasonsOf(version)
			if err != nil {
				t.Fatal(err)
			}
			opts := append([]func(*rego.Rego){
				rego.Query(`x := karpgate.budgets.analyze(input.pool, input.now)`),
				rego.Input(map[string]any{"pool": pool, "now": now}),
			}, RegoOptions(NewCacheFor(reasons))...)
			rs, err := rego.New(opts...).Eval(context.Background())
			if err != nil || len(rs) != 1 {
				t.Fatalf("%v %v", rs, err)
			}
			analysis, _ := rs[0].Bindings["x"].(map[string]any)
			byReason, _ := analysis["reasons"].(map[string]any)
			var got []string
			for r := range byReason {
				got = append(got, r)
			}
			slices.Sort(got)
			var want []string
			for _, r := range reasons {
				want = append(want, string(r))
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("analysis covers %v, want the release's %v", got, want)
			}
		})
	}
}
