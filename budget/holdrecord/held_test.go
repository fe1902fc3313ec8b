package holdrecord

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// TestHeldVouchesOnlyForKarpgatesBudgetAtItsPlace: the policy engine
// exempts what Held returns from the budget rules, so every way a record
// can disagree with the budgets must return nothing.
var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func TestHeldVouchesOnlyForKarpgatesBudgetAtItsPlace(t *testing.T) {
	record := func(budget map[string]any, index int) string {
		b, err := json.Marshal(&Marker{Budget: budget, Index: index, Since: t0, Reason: "test", By: ByFreeze})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	zeroAll := map[string]any{"nodes": "0"}
	for _, tc := range []struct {
		name, budgets string
		annotation    *string
		want          int // -1: nothing held
	}{
		{name: "no record", budgets: `[{"nodes":"0","reasons":["Drifted"]}]`, want: -1},
		{name: "record of Hold", budgets: `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`, annotation: ptr(record(Budget(), 1)), want: 1},
		{name: "record names another index", budgets: `[{"nodes":"0","reasons":["Drifted"]},{"nodes":"10%"}]`, annotation: ptr(record(Budget(), 1)), want: -1},
		{name: "index past the list", budgets: `[{"nodes":"0","reasons":["Drifted"]}]`, annotation: ptr(record(Budget(), 1)), want: -1},
		{name: "negative index", budgets: `[{"nodes":"0","reasons":["Drifted"]}]`, annotation: ptr(record(Budget(), -1)), want: -1},
		{name: "record of another budget, present", budgets: `[{"nodes":"0"}]`, annotation: ptr(record(zeroAll, 0)), want: -1},
		{name: "budget changed since", budgets: `[{"nodes":"0","reasons":["Drifted"],"schedule":"@daily","duration":"1h"}]`, annotation: ptr(record(Budget(), 0)), want: -1},
		{name: "record does not parse", budgets: `[{"nodes":"0","reasons":["Drifted"]}]`, annotation: ptr(`{"index":0`), want: -1},
		{name: "record without a budget", budgets: `[{"nodes":"0","reasons":["Drifted"]}]`, annotation: ptr(`{"index":0}`), want: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var budgets []any
			if err := json.Unmarshal([]byte(tc.budgets), &budgets); err != nil {
				t.Fatal(err)
			}
			annotations := map[string]string{}
			if tc.annotation != nil {
				annotations[karpenter.RolloutGuardAnnotation] = *tc.annotation
			}
			m, i, ok := Held(annotations, budgets)
			if got := map[bool]int{true: i, false: -1}[ok]; got != tc.want {
				t.Fatalf("Held = %d, %v; want %d", i, ok, tc.want)
			}
			if ok && (m == nil || !m.Frozen()) {
				t.Fatalf("Held returned marker %+v, want the freeze it records", m)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// FuzzHeld: any record and budgets, no panic, and whatever Held vouches
// for is karpgate's budget at the index it returns.
func FuzzHeld(f *testing.F) {
	f.Add(`{"budget":{"nodes":"0","reasons":["Drifted"]},"index":0}`, `[{"nodes":"0","reasons":["Drifted"]}]`)
	f.Add(`{"budget":{"nodes":"0"},"index":9}`, `[{"nodes":"0"}]`)
	f.Add(`null`, `[]`)
	f.Fuzz(func(t *testing.T, record, budgetsJSON string) {
		var budgets []any
		if json.Unmarshal([]byte(budgetsJSON), &budgets) != nil {
			return
		}
		_, i, ok := Held(map[string]string{karpenter.RolloutGuardAnnotation: record}, budgets)
		if ok && (i < 0 || i >= len(budgets) || !SameBudget(budgets[i], Budget())) {
			t.Fatalf("Held vouched for budgets[%d] of %s", i, budgetsJSON)
		}
	})
}
