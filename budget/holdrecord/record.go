package holdrecord

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// Marker is what the guard records on a NodePool when it adds its budget.
type Marker struct {
	// Budget is the budget exactly as added, as JSON.
	Budget map[string]any `json:"budget"`
	// Index is where in spec.disruption.budgets it was added.
	Index int `json:"index"`
	// Since is when the hold began.
	Since time.Time `json:"since"`
	// Reason says, for people, why the rollout was held.
	Reason string `json:"reason"`
	// By names the holder: ByFreeze when `karpgate freeze` (or the guard's
	// cluster-wide trip) added the budget; ByRolloutPlan(name) for the wave
	// hold of a RolloutPlan; empty for the rollout guard's own hold, which
	// is how every record written before freezes existed reads. What
	// vouches for a hold (Held), what keeps and what ends it (Resumes) are
	// the same for every holder; only who lifts it, and whether its
	// NodePool may be deleted, differ.
	By string `json:"by,omitempty"`
	// Under, on a freeze, is the wave hold it was laid over (a By value):
	// lifting the freeze gives the budget back to that plan instead of
	// removing it, so that a freeze and `karpgate resume` never release a
	// NodePool the plan still holds.
	Under string `json:"under,omitempty"`
}

// ByFreeze marks a freeze: people lift it (`karpgate resume`), never the
// loop, whether the rollout guard is on or off.
const ByFreeze = "freeze"

// rolloutPlanPrefix starts the By of a RolloutPlan's wave hold.
const rolloutPlanPrefix = "rolloutplan/"

// ByRolloutPlan is the By of the wave hold of the RolloutPlan named plan.
func ByRolloutPlan(plan string) string { return rolloutPlanPrefix + plan }

// PlanOf returns the RolloutPlan a By value names, "" for any other holder.
func PlanOf(by string) string {
	if plan, ok := strings.CutPrefix(by, rolloutPlanPrefix); ok {
		return plan
	}
	return ""
}

// Frozen reports whether the hold is a freeze rather than the rollout
// guard's own hold of one NodePool or a plan's wave hold.
func (m *Marker) Frozen() bool { return m != nil && m.By == ByFreeze }

// Guarded reports whether the hold is the rollout guard's own, which the
// loop places and lifts.
func (m *Marker) Guarded() bool { return m != nil && m.By == "" }

// RolloutPlan names the plan whose wave hold this is, "" for a freeze or
// the rollout guard's hold.
func (m *Marker) RolloutPlan() string {
	if m == nil {
		return ""
	}
	return PlanOf(m.By)
}

// Holder names who holds, for messages: "the rollout guard", "a freeze"
// or "rollout plan NAME's wave hold".
func (m *Marker) Holder() string {
	switch {
	case m.Frozen():
		return "a freeze"
	case m.RolloutPlan() != "":
		return "rollout plan " + m.RolloutPlan() + "'s wave hold"
	}
	return "the rollout guard"
}

// Budget is the budget the guard adds: no drift disruptions at all,
// whatever the time, leaving the other reasons to the user's budgets.
func Budget() map[string]any {
	return map[string]any{"nodes": "0", "reasons": []any{karpenter.ReasonDrifted}}
}

// ReadMarker returns the marker in a NodePool's annotations, nil when the
// guard holds nothing there.
func ReadMarker(annotations map[string]string) (*Marker, error) {
	raw, ok := annotations[karpenter.RolloutGuardAnnotation]
	if !ok {
		return nil, nil
	}
	var m Marker
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Budget == nil {
		return nil, fmt.Errorf("annotation %s is not a karpgate rollout guard record (%w); remove the annotation by hand and check spec.disruption.budgets", karpenter.RolloutGuardAnnotation, errOrMissing(err))
	}
	return &m, nil
}

func errOrMissing(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("no budget recorded")
}

// ResumedAt returns when the guard was last lifted on a NodePool.
func ResumedAt(annotations map[string]string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, annotations[karpenter.RolloutGuardResumedAnnotation])
	return t, err == nil
}

// SameBudget compares two budgets as JSON values.
func SameBudget(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// Present reports whether budgets (as stored) still hold the marker's budget
// at its index.
func (m *Marker) Present(budgets []any) bool {
	return m.Index >= 0 && m.Index < len(budgets) && SameBudget(budgets[m.Index], m.Budget)
}
