package guard

import (
	"sort"
	"time"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Stuck is a NodeClaim launched during a drift rollout whose Node did not
// become Ready in time.
type Stuck struct {
	NodeClaim string    `json:"nodeClaim"`
	Launched  time.Time `json:"launched"`
}

// Detect finds the NodeClaims of pool launched since the rollout began (the
// oldest Drifted transition, rolloutSince) and since the guard was last
// lifted, whose Node is still not Ready timeout after launch. next is when
// the earliest NodeClaim still waiting for its Node reaches the timeout, zero
// when none is waiting: the loop looks again then.
//
// NodeClaims that are drifted themselves, deleting or terminating are not
// replacements and never count.
func Detect(pool state.Pool, rolloutSince, now time.Time, timeout time.Duration) (stuck []Stuck, next time.Time) {
	if rolloutSince.IsZero() {
		return nil, time.Time{}
	}
	resumed, wasResumed := holdrecord.ResumedAt(pool.NodePool.Annotations)
	nodes := state.NodesByProviderID(pool.Nodes)
	for _, nc := range pool.NodeClaims {
		launched := nc.CreationTimestamp.Time
		// Both instants have whole seconds: a NodeClaim launched in the
		// second of the resume counts as launched before it.
		if launched.Before(rolloutSince) || (wasResumed && !launched.After(resumed)) || nc.DeletionTimestamp != nil ||
			nc.Condition(karpenter.ConditionDrifted).IsTrue() || nc.Condition(karpenter.ConditionInstanceTerminating).IsTrue() {
			continue
		}
		if n := nodes[nc.Status.ProviderID]; nc.Status.ProviderID != "" && n != nil && state.NodeReady(n) {
			continue
		}
		deadline := launched.Add(timeout)
		if !now.Before(deadline) {
			stuck = append(stuck, Stuck{NodeClaim: nc.Name, Launched: launched.UTC()})
			continue
		}
		if next.IsZero() || deadline.Before(next) {
			next = deadline
		}
	}
	sort.Slice(stuck, func(i, j int) bool { return stuck[i].NodeClaim < stuck[j].NodeClaim })
	return stuck, next
}
