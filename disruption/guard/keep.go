package guard

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Kept is how a write to a held NodePool must change so that karpgate's
// hold survives it: the budgets to store and the record that says where
// the hold budget now is.
type Kept struct {
	Budgets []any
	Record  string
	// Marker is the hold as kept, its Index where the budget now is.
	Marker *holdrecord.Marker
	// Restored: the write dropped or changed the budget, and Budgets puts
	// it back (otherwise only the record is restored).
	Restored bool
}

// Keep is what the mutating webhook asks of every write to a NodePool:
// while the stored object is held (a freeze, the rollout guard's hold, or
// any other holder's record), the hold budget and its record stay,
// whatever the write says. A GitOps controller applying the NodePool from
// Git (server-side apply, which owns the whole budgets list, or
// client-side apply and replace, which send it) would otherwise drop a
// budget Git does not have.
//
// Only a hold the stored object vouches for is kept (holdrecord.Held: the
// record parses, names karpgate's budget, and that budget sits at the
// recorded index), and only that budget is put back: a record that names
// another budget, or whose budget is gone, keeps nothing. Only a resume
// ends a hold (holdrecord.Resumes: the write removes or replaces the
// record and sets karpgate.io/rollout-guard-resumed to a later instant, as
// Lift does),
// whatever the hold's since says. It returns nil when the write keeps the
// hold already or there is none to keep.
func Keep(object, oldObject map[string]any, now time.Time) (*Kept, error) {
	before := annotations(oldObject)
	stored, _, _ := unstructured.NestedSlice(oldObject, budgetsPath...)
	m, _, held := holdrecord.Held(before, stored)
	if !held {
		return nil, nil
	}
	after := annotations(object)
	if holdrecord.Resumes(before, after, now) {
		return nil, nil
	}
	var budgets []any
	if v, _, _ := unstructured.NestedFieldNoCopy(object, budgetsPath...); v != nil {
		var err error
		if budgets, _, err = unstructured.NestedSlice(object, budgetsPath...); err != nil {
			return nil, fmt.Errorf("spec.disruption.budgets: %w", err)
		}
	}
	kept := *m
	restored := false
	if !kept.Present(budgets) {
		kept.Index, restored = len(budgets), true
		budgets = append(budgets, holdrecord.Budget())
	}
	record, err := json.Marshal(&kept)
	if err != nil {
		return nil, err
	}
	if !restored && after[karpenter.RolloutGuardAnnotation] == before[karpenter.RolloutGuardAnnotation] {
		return nil, nil
	}
	return &Kept{Budgets: budgets, Record: string(record), Marker: &kept, Restored: restored}, nil
}

// annotations reads an unstructured object's annotations as strings;
// values of other types (which the API server never stores) are left out.
func annotations(object map[string]any) map[string]string {
	metadata, _ := object["metadata"].(map[string]any)
	raw, _ := metadata["annotations"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
