package guard

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// TestConfirmLiftedSeesAHoldComeBack: what Release concludes from the
// NodePool the API server has after the resume's write.
func TestConfirmLiftedSeesAHoldComeBack(t *testing.T) {
	const (
		guardKey = karpenter.RolloutGuardAnnotation
		record   = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-05T08:00:00Z","reason":"incident 42","by":"freeze"}`
		newHold  = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-05T09:00:00Z","reason":"incident 43","by":"freeze"}`
		free     = `[{"nodes":"10%"}]`
		held     = `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`
	)
	lifted, err := holdrecord.ReadMarker(map[string]string{guardKey: record})
	if err != nil {
		t.Fatal(err)
	}
	pool := func(budgets string, annotations map[string]string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: poolJSON(t, budgets, annotations)}
	}
	for _, tt := range []struct {
		name      string
		sent, got *unstructured.Unstructured
		notLifted bool
	}{
		{"gone", pool(free, nil), pool(free, nil), false},
		{"a budget of the same value that is the user's stays", pool(held, nil), pool(held, nil), false},
		{"the budget back", pool(free, nil), pool(held, nil), true},
		{"the record back", pool(free, nil), pool(free, map[string]string{guardKey: record}), true},
		{"both back", pool(free, nil), pool(held, map[string]string{guardKey: record}), true},
		{"a record that does not parse", pool(free, nil), pool(free, map[string]string{guardKey: "{"}), true},
		{"a new hold placed since", pool(free, nil), pool(held, map[string]string{guardKey: newHold}), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := confirmLifted(lifted, tt.sent, tt.got)
			if got := errors.Is(err, ErrNotLifted); got != tt.notLifted || (err != nil) != tt.notLifted {
				t.Fatalf("confirmLifted = %v, want not lifted: %v", err, tt.notLifted)
			}
		})
	}
}
