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
// while the stored object is held (a freeze or the rollout guard's hold),
// the hold budget and its record stay, whatever the write says. A GitOps
// controller applying the NodePool from Git (server-side apply, which owns
// the whole budgets list, or client-side apply and replace, which send it)
// would otherwise drop a budget Git does not have. Only a resume ends a
// hold: a write that sets karpgate.io/rollout-guard-resumed to a new
// instant no earlier than the hold began, as Lift does. It returns nil
// when the write keeps the hold already or there is none to keep.
func Keep(object, oldObject map[string]any) (*Kept, error) {
	before := annotations(oldObject)
	m, err := holdrecord.ReadMarker(before)
	if err != nil || m == nil {
		return nil, nil //nolint:nilerr // an unreadable record is people's to fix; karpgate keeps only what it can read
	}
	after := annotations(object)
	if resumes(before, after, m) {
		return nil, nil
	}
	var budgets []any
	if v, _, _ := unstructured.NestedFieldNoCopy(object, budgetsPath...); v != nil {
		if budgets, _, err = unstructured.NestedSlice(object, budgetsPath...); err != nil {
			return nil, fmt.Errorf("spec.disruption.budgets: %w", err)
		}
	}
	kept := *m
	restored := false
	if !m.Present(budgets) {
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

// resumes reports whether a write ends the hold m: it sets the resumed
// annotation to a new instant at or after the hold began.
func resumes(before, after map[string]string, m *holdrecord.Marker) bool {
	value := after[karpenter.RolloutGuardResumedAnnotation]
	if value == before[karpenter.RolloutGuardResumedAnnotation] {
		return false
	}
	at, err := time.Parse(time.RFC3339, value)
	return err == nil && !at.Before(m.Since)
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
