package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Outcome says what Lift did.
type Outcome string

const (
	// NotHeld means the NodePool carries no guard record; nothing changed.
	NotHeld Outcome = "not-held"
	// Removed means karpgate's budget and record were removed.
	Removed Outcome = "removed"
	// AlreadyGone means karpgate's budget had already been removed by someone
	// else; only the record was removed.
	AlreadyGone Outcome = "already-gone"
	// Returned means a freeze laid over a rollout plan's wave hold was
	// lifted and the budget stays, held by that plan again: the plan
	// releases it when its wave comes.
	Returned Outcome = "returned"
	// NotKarpgates means the record named a budget karpgate never adds; only
	// the record was removed, and every budget stays.
	NotKarpgates Outcome = "not-karpgates"
)

// ErrAmbiguous means karpgate's budget is not where it was added, but a budget of
// the same value is elsewhere; karpgate cannot tell which is its own.
var ErrAmbiguous = errors.New("karpgate cannot tell its budget from yours")

var budgetsPath = []string{"spec", "disruption", "budgets"}

// Hold appends the guard's budget to the NodePool and records it. It fails,
// changing nothing, when karpgate already holds the NodePool or the budgets
// cannot be read. A record that vouches for no hold (holdrecord.Held: it
// does not parse, names a budget karpgate never adds, or its budget is not
// at its index) holds nothing, so it is replaced: otherwise anyone who may
// write the NodePool could plant one and make a later freeze, in an
// incident, skip the NodePool as "already held".
func Hold(np *unstructured.Unstructured, now time.Time, reason string) (*holdrecord.Marker, error) {
	return hold(np, now, reason, "")
}

// Freeze is Hold for `karpgate freeze`: the same budget and record, marked
// as a freeze so that only a person lifts it.
func Freeze(np *unstructured.Unstructured, now time.Time, reason string) (*holdrecord.Marker, error) {
	return hold(np, now, reason, holdrecord.ByFreeze)
}

// HoldForPlan is Hold for a RolloutPlan: the same budget, its record naming
// the plan (holdrecord.ByRolloutPlan), which only that plan lifts, or a
// person with `karpgate resume`.
func HoldForPlan(np *unstructured.Unstructured, now time.Time, reason, plan string) (*holdrecord.Marker, error) {
	return hold(np, now, reason, holdrecord.ByRolloutPlan(plan))
}

// freezeOver lays a freeze over the wave hold m of a RolloutPlan: the
// budget stays where it is and the record becomes a freeze that remembers
// the plan (Under), so that the plan cannot release the NodePool while the
// freeze lasts and lifting the freeze hands the budget back to the plan.
// The record changes in the same write that marks the plan's hold as
// resumed, which is what tells the mutating webhook (Keep) that the old
// record may go.
func freezeOver(np *unstructured.Unstructured, m *holdrecord.Marker, now time.Time, reason string) (*holdrecord.Marker, error) {
	budgets, _, err := unstructured.NestedSlice(np.Object, budgetsPath...)
	if err != nil {
		return nil, fmt.Errorf("NodePool %s: spec.disruption.budgets: %w", np.GetName(), err)
	}
	if !m.Present(budgets) {
		return nil, fmt.Errorf("NodePool %s: the budget of %s is no longer at spec.disruption.budgets[%d]; `karpgate resume %s` clears the record, then freeze it again", np.GetName(), m.Holder(), m.Index, np.GetName())
	}
	frozen := &holdrecord.Marker{Budget: m.Budget, Index: m.Index, Since: now.UTC().Truncate(time.Second), Reason: reason, By: holdrecord.ByFreeze, Under: m.By}
	return frozen, rewrite(np, frozen, now)
}

// rewrite replaces the NodePool's record with m, as a resume of the old
// hold and the start of m in one write (see freezeOver). The resume instant
// must be later than the stored one (holdrecord.Resumes), which the last
// handover may have set in this same second: a freeze over a plan's hold
// resumed at once is the case a person meets.
func rewrite(np *unstructured.Unstructured, m *holdrecord.Marker, now time.Time) error {
	record, err := json.Marshal(m)
	if err != nil {
		return err
	}
	resumed := holdrecord.NextResume(np.GetAnnotations(), now)
	setAnnotation(np, karpenter.RolloutGuardAnnotation, string(record))
	setAnnotation(np, karpenter.RolloutGuardResumedAnnotation, resumed)
	return nil
}

// ErrHeld is returned when karpgate already holds the NodePool.
var ErrHeld = errors.New("karpgate already holds it")

func hold(np *unstructured.Unstructured, now time.Time, reason, by string) (*holdrecord.Marker, error) {
	budgets, found, err := unstructured.NestedSlice(np.Object, budgetsPath...)
	if err != nil {
		return nil, fmt.Errorf("NodePool %s: spec.disruption.budgets: %w", np.GetName(), err)
	}
	if m, _, held := holdrecord.Held(np.GetAnnotations(), budgets); held {
		return nil, fmt.Errorf("NodePool %s: %w: %s holds it since %s", np.GetName(), ErrHeld, m.Holder(), m.Since.Format(time.RFC3339))
	}
	if !found {
		// The v1 CRD always defaults the list; appending to a missing one
		// would silently drop the implicit 10% default.
		return nil, fmt.Errorf("NodePool %s: spec.disruption.budgets is missing, so the NodePool is not a defaulted v1 object; karpgate adds no budget to it", np.GetName())
	}
	m := &holdrecord.Marker{Budget: holdrecord.Budget(), Index: len(budgets), Since: now.UTC().Truncate(time.Second), Reason: reason, By: by}
	record, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedSlice(np.Object, append(budgets, holdrecord.Budget()), budgetsPath...); err != nil {
		return nil, err
	}
	setAnnotation(np, karpenter.RolloutGuardAnnotation, string(record))
	return m, nil
}

// Lift removes the guard's budget and record from the NodePool and notes when
// the hold ended, in one write, whatever the record's since says. See the
// package documentation for when it refuses.
func Lift(np *unstructured.Unstructured, now time.Time) (Outcome, *holdrecord.Marker, error) {
	annotations := np.GetAnnotations()
	m, err := holdrecord.ReadMarker(annotations)
	if err != nil {
		return "", nil, fmt.Errorf("NodePool %s: %w", np.GetName(), err)
	}
	if m == nil {
		return NotHeld, nil, nil
	}
	budgets, _, err := unstructured.NestedSlice(np.Object, budgetsPath...)
	if err != nil {
		return "", m, fmt.Errorf("NodePool %s: spec.disruption.budgets: %w", np.GetName(), err)
	}
	outcome := AlreadyGone
	_, index, held := holdrecord.Held(annotations, budgets)
	switch {
	case held && m.Frozen() && m.Under != "":
		returned := &holdrecord.Marker{Budget: m.Budget, Index: index, Since: now.UTC().Truncate(time.Second),
			Reason: "the freeze laid over it was lifted (" + m.Reason + ")", By: m.Under}
		return Returned, m, rewrite(np, returned, now)
	case held:
		outcome = Removed
		budgets = append(budgets[:index:index], budgets[index+1:]...)
		if err := unstructured.SetNestedSlice(np.Object, budgets, budgetsPath...); err != nil {
			return "", m, err
		}
	case !holdrecord.SameBudget(m.Budget, holdrecord.Budget()):
		// A record of a budget karpgate never adds vouches for nothing:
		// that budget is someone's own, and stays.
		outcome = NotKarpgates
	case indexOf(budgets, m.Budget) >= 0:
		return "", m, fmt.Errorf("NodePool %s: %w: spec.disruption.budgets[%d] is no longer karpgate's budget %s, but spec.disruption.budgets[%d] has the same value and may be yours; karpgate changes nothing: in one edit, delete the budget you no longer want and the annotation %s, and set the annotation %s to the current time (RFC 3339), which tells karpgate's webhook the hold is over",
			np.GetName(), ErrAmbiguous, m.Index, compact(m.Budget), indexOf(budgets, m.Budget), karpenter.RolloutGuardAnnotation, karpenter.RolloutGuardResumedAnnotation)
	}
	resumed := holdrecord.NextResume(annotations, now)
	delete(annotations, karpenter.RolloutGuardAnnotation)
	annotations[karpenter.RolloutGuardResumedAnnotation] = resumed
	np.SetAnnotations(annotations)
	return outcome, m, nil
}

func indexOf(budgets []any, b map[string]any) int {
	for i, candidate := range budgets {
		if holdrecord.SameBudget(candidate, b) {
			return i
		}
	}
	return -1
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func setAnnotation(np *unstructured.Unstructured, key, value string) {
	annotations := np.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	np.SetAnnotations(annotations)
}
