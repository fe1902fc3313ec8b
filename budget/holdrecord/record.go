package holdrecord

import (
	"encoding/json"
	"fmt"
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
	// cluster-wide trip) added the budget; empty for the rollout guard's own
	// hold, which is how every record written before freezes existed reads.
	// Another holder adds its own value: what vouches for a hold (Held),
	// what keeps and what ends it (Resumes) are the same for every holder;
	// only who lifts it, and whether its NodePool may be deleted, differ.
	By string `json:"by,omitempty"`
}

// ByFreeze marks a freeze: people lift it (`karpgate resume`), never the
// loop, whether the rollout guard is on or off.
const ByFreeze = "freeze"

// Frozen reports whether the hold is a freeze rather than the rollout
// guard's own hold of one NodePool.
func (m *Marker) Frozen() bool { return m != nil && m.By == ByFreeze }

// Holder names who holds, for messages: "the rollout guard" or "a freeze".
func (m *Marker) Holder() string {
	if m.Frozen() {
		return "a freeze"
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
