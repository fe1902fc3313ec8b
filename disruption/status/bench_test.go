package status

import (
	"fmt"
	"testing"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/test/benchratio"
)

const (
	benchPools         = 200
	benchClaimsPerPool = 50 // 10,000 NodeClaims and as many Nodes
)

// benchFleet is a large cluster: every pool has a business-hours drift
// freeze, a nightly drift window and the 10% cap; a tenth of the NodeClaims
// are drifted and a fifth run an image that will drift.
func benchFleet(b *testing.B) state.Snapshot {
	var s state.Snapshot
	for p := range benchPools {
		name := fmt.Sprintf("pool-%03d", p)
		s.NodePools = append(s.NodePools, pool(b, name, fmt.Sprintf(
			`[{"nodes":"10%%"},{"nodes":"0","schedule":"0 9 * * mon-fri","duration":"8h","reasons":["Drifted"]},{"nodes":"1","schedule":"%d 22 * * *","duration":"4h","reasons":["Drifted"]}]`, p%60)))
		for i := range benchClaimsPerPool {
			var opts []memberOpt
			switch {
			case i%10 == 0:
				opts = append(opts, oldImage, driftedSince("AMIDrift", monday0830.Add(-time.Duration(i)*time.Minute)))
			case i%5 == 1:
				opts = append(opts, oldImage)
			case i%25 == 2:
				opts = append(opts, notReady)
			}
			m := newMember(name, i, opts...)
			s.NodeClaims = append(s.NodeClaims, m.claim)
			s.Nodes = append(s.Nodes, m.node)
		}
	}
	s.NodeClasses = []*state.EC2NodeClass{defaultClass()}
	return s
}

// budgetMaths is the floor any recompute pays: reading, compiling and
// evaluating every NodePool's budgets now and a week ahead.
func budgetMaths(pools []*state.NodePool, nodes, disrupting int, now time.Time) {
	for _, np := range pools {
		budgets, err := budget.FromNodePool(budgetContent(np))
		if err != nil {
			panic(err)
		}
		set := budget.CompileSet(budgets)
		_, _ = set.Allowed(budget.Disrupted(nodes, disrupting), now)
		_, _ = set.NextChange(budget.Disrupted(nodes, disrupting), now, Horizon)
	}
}

// BenchmarkComputeAll200Pools10000NodeClaims is the full recompute behind
// /status and `karpgate status`: grouping, node counting, budgets, drift and
// AMI outlook for every NodePool.
func BenchmarkComputeAll200Pools10000NodeClaims(b *testing.B) {
	fleet := benchFleet(b)
	benchratio.Benchmark(b, func() { ComputeAll(fleet, nil, monday0830) },
		map[string]func(){"x-budget-maths": func() { budgetMaths(fleet.NodePools, benchClaimsPerPool, 2, monday0830) }})
}

// BenchmarkComputeOnePool is what one reconcile computes after a change.
func BenchmarkComputeOnePool(b *testing.B) {
	pools := benchFleet(b).Pools()
	one := pools[0]
	benchratio.Benchmark(b, func() { Compute(one, nil, monday0830) },
		map[string]func(){"x-budget-maths": func() { budgetMaths([]*state.NodePool{one.NodePool}, benchClaimsPerPool, 2, monday0830) }})
}
