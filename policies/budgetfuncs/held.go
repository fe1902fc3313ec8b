package budgetfuncs

import (
	"slices"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// heldBudget is the budget karpgate's rollout guard or a freeze added to
// hold drift ({nodes: "0", reasons: [Drifted]}, always active), as a valid
// karpgate.io/rollout-guard record vouches for it (holdrecord.Held).
//
// karpgate.budgets.analyze leaves it out: the analysis says what the
// user's budgets do, which is what the budget rules judge. A hold is
// karpgate's own, temporary by design and lifted by `karpgate resume`;
// judged as part of the budgets it is "drift is never allowed" (KG301),
// and a user who denies KG301 would make karpgate's webhook refuse the
// hold itself and every later write to the held NodePool. Only that one
// budget goes: a user's budget of the same value elsewhere, or a record
// that names another budget or index, is judged as always.
type heldBudget struct {
	index int
	by    string // "guard", "freeze" or "rolloutplan"
}

// findHeld reads the record and budgets of pool (FieldPaths as JSON
// values); nil when no valid record vouches for a budget.
func findHeld(pool map[string]any) *heldBudget {
	metadata, _ := pool["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	record, ok := annotations[karpenter.RolloutGuardAnnotation].(string)
	if !ok {
		return nil
	}
	spec, _ := pool["spec"].(map[string]any)
	disruption, _ := spec["disruption"].(map[string]any)
	budgets, _ := disruption["budgets"].([]any)
	m, i, ok := holdrecord.Held(map[string]string{karpenter.RolloutGuardAnnotation: record}, budgets)
	if !ok {
		return nil
	}
	by := "guard"
	switch {
	case m.Frozen():
		by = holdrecord.ByFreeze
	case m.RolloutPlan() != "":
		by = "rolloutplan"
	}
	return &heldBudget{index: i, by: by}
}

// leaveOut returns budgets without the held one; the others keep their
// Index, so paths and messages still name their place in the NodePool.
func (h *heldBudget) leaveOut(budgets []budget.Budget) []budget.Budget {
	if h == nil {
		return budgets
	}
	return slices.DeleteFunc(slices.Clone(budgets), func(b budget.Budget) bool { return b.Index == h.index })
}
