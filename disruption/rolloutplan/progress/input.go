package progress

import (
	"time"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/rolloutplan/membership"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Holder says who holds a NodePool's drift now.
type Holder string

// Holders.
const (
	HeldByNobody    Holder = ""
	HeldByPlan      Holder = "plan"   // this plan's wave hold
	HeldByFreeze    Holder = "freeze" // a freeze, over this plan's hold or not
	HeldByGuard     Holder = "guard"  // the rollout guard
	HeldByOtherPlan Holder = "other-plan"
)

// HolderOf reads who holds np, as plan sees it. A record whose budget is
// gone holds nothing.
func HolderOf(np *state.NodePool, plan string) Holder {
	m, err := holdrecord.ReadMarker(np.Annotations)
	if err != nil || m == nil || !m.Present(np.Spec.Disruption.Budgets) {
		return HeldByNobody
	}
	switch {
	case m.Frozen():
		return HeldByFreeze
	case m.RolloutPlan() == plan:
		return HeldByPlan
	case m.RolloutPlan() != "":
		return HeldByOtherPlan
	}
	return HeldByGuard
}

// NodePool is what the plan sees of one of its NodePools.
type NodePool struct {
	Name   string
	Holder Holder
	// NodeClaims counts the pool's NodeClaims; Drifted those Drifted with a
	// reason the plan governs, not being deleted; Ungoverned those drifted
	// for other reasons only.
	NodeClaims, Drifted, Ungoverned int
	// NewestDrift is the latest transition to Drifted among the governed.
	NewestDrift time.Time
	// State is the pool as the gates read it.
	State state.Pool
}

// Observe reads a NodePool for plan.
func Observe(p state.Pool, plan *v1alpha1.RolloutPlan) NodePool {
	out := NodePool{Name: p.NodePool.Name, Holder: HolderOf(p.NodePool, plan.Name), NodeClaims: len(p.NodeClaims), State: p}
	for _, nc := range p.NodeClaims {
		c := nc.Condition(karpenter.ConditionDrifted)
		if !c.IsTrue() || nc.DeletionTimestamp != nil || nc.Condition(karpenter.ConditionInstanceTerminating).IsTrue() {
			continue
		}
		if !plan.Spec.Governs(c.Reason) {
			out.Ungoverned++
			continue
		}
		out.Drifted++
		if t := c.LastTransitionTime.Time; t.After(out.NewestDrift) {
			out.NewestDrift = t
		}
	}
	return out
}

// Input is everything Step reads.
type Input struct {
	Plan *v1alpha1.RolloutPlan
	// Waves are the plan's NodePools, per wave, without Conflicts.
	Waves membership.Waves
	// Conflicts are NodePools the waves select that an older plan has.
	Conflicts []string
	// NodePools are the plan's NodePools by name.
	NodePools map[string]NodePool
	Now       time.Time
}

// Want is what Step wants done with a NodePool's hold.
type Want string

// Wants.
const (
	Hold    Want = "hold"
	Release Want = "release"
	// Leave: change nothing (an aborted plan leaves its holds to people).
	Leave Want = "leave"
)

// Event is one Event to record on the plan, and on each NodePool named.
type Event struct {
	Warning   bool
	Reason    string
	Note      string
	NodePools []string
}

// Output is what Step decided.
type Output struct {
	Status v1alpha1.RolloutPlanStatus
	// Holds says, for every NodePool of the plan, what to do with its hold.
	Holds  map[string]Want
	Events []Event
	// Wake is when to step again with no other change (a soak ends, a
	// gate's timeout passes); zero for never.
	Wake time.Time
}
