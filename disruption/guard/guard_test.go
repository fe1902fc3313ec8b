package guard

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func nodePool(t *testing.T, budgets string, annotations map[string]string) *unstructured.Unstructured {
	t.Helper()
	var b any
	if err := json.Unmarshal([]byte(budgets), &b); err != nil {
		t.Fatal(err)
	}
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": "default"},
		"spec":     map[string]any{"disruption": map[string]any{"budgets": b}},
	}}
	np.SetAnnotations(annotations)
	return np
}

func budgetsJSON(t *testing.T, np *unstructured.Unstructured) string {
	t.Helper()
	b, _, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "disruption", "budgets")
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

const userZeroDrift = `{"nodes":"0","reasons":["Drifted"]}`

func TestHoldAppendsItsBudgetAndRecordsIt(t *testing.T) {
	np := nodePool(t, `[`+userZeroDrift+`,{"nodes":"10%"}]`, nil)
	m, err := Hold(np, t0, "stuck")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := budgetsJSON(t, np), `[`+userZeroDrift+`,{"nodes":"10%"},`+userZeroDrift+`]`; got != want {
		t.Errorf("budgets = %s, want %s", got, want)
	}
	read, err := holdrecord.ReadMarker(np.GetAnnotations())
	if err != nil || read == nil || read.Index != 2 || !read.Since.Equal(t0) || read.Reason != "stuck" || !reflect.DeepEqual(read, m) {
		t.Errorf("marker = %+v (%v), returned %+v", read, err, m)
	}
	if _, err := Hold(np, t0, "again"); err == nil {
		t.Errorf("holding a held NodePool succeeded")
	}
	if _, err := Hold(nodePool(t, `null`, nil), t0, "x"); err == nil {
		t.Errorf("holding a NodePool without budgets succeeded; it would drop the implicit default")
	}
}

func TestLiftRemovesOnlyKarpgatesBudget(t *testing.T) {
	held := func(budgets string, index int) *unstructured.Unstructured {
		m := holdrecord.Marker{Budget: holdrecord.Budget(), Index: index, Since: t0, Reason: "stuck"}
		record, _ := json.Marshal(m)
		return nodePool(t, budgets, map[string]string{karpenter.RolloutGuardAnnotation: string(record), "other": "kept"})
	}
	tests := []struct {
		name        string
		np          *unstructured.Unstructured
		wantOutcome Outcome
		wantBudgets string
		wantErr     error
	}{
		{"an identical user budget before it survives",
			held(`[`+userZeroDrift+`,`+userZeroDrift+`]`, 1), Removed, `[` + userZeroDrift + `]`, nil},
		{"budgets appended after it are kept",
			held(`[{"nodes":"10%"},`+userZeroDrift+`,{"nodes":"5"}]`, 1), Removed, `[{"nodes":"10%"},{"nodes":"5"}]`, nil},
		{"edits to other budgets are kept",
			held(`[{"nodes":"20%"},`+userZeroDrift+`]`, 1), Removed, `[{"nodes":"20%"}]`, nil},
		{"an explicit empty list stays empty",
			held(`[`+userZeroDrift+`]`, 0), Removed, `[]`, nil},
		{"removed by someone else: only the record goes",
			held(`[{"nodes":"10%"}]`, 1), AlreadyGone, `[{"nodes":"10%"}]`, nil},
		{"a changed budget at its index is not karpgate's",
			held(`[{"nodes":"10%"},{"nodes":"1","reasons":["Drifted"]}]`, 1), AlreadyGone, `[{"nodes":"10%"},{"nodes":"1","reasons":["Drifted"]}]`, nil},
		{"moved, with an equal budget elsewhere: ambiguous, nothing changes",
			held(`[`+userZeroDrift+`,{"nodes":"10%"}]`, 1), "", `[` + userZeroDrift + `,{"nodes":"10%"}]`, ErrAmbiguous},
		{"not held", nodePool(t, `[`+userZeroDrift+`]`, nil), NotHeld, `[` + userZeroDrift + `]`, nil},
		{"a hold since 2099 is lifted now",
			nodePool(t, `[{"nodes":"10%"},`+userZeroDrift+`]`, map[string]string{karpenter.RolloutGuardAnnotation: `{"budget":` + userZeroDrift + `,"index":1,"since":"2099-01-01T00:00:00Z","reason":"forged","by":"freeze"}`, "other": "kept"}),
			Removed, `[{"nodes":"10%"}]`, nil},
		{"a record of a budget karpgate never adds: the record goes, the budget stays",
			nodePool(t, `[{"nodes":"10%"},{"nodes":"0"}]`, map[string]string{karpenter.RolloutGuardAnnotation: `{"budget":{"nodes":"0"},"index":1,"since":"2026-01-05T08:00:00Z","reason":"forged"}`, "other": "kept"}),
			NotKarpgates, `[{"nodes":"10%"},{"nodes":"0"}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.np.DeepCopy()
			outcome, _, err := Lift(tt.np, t0.Add(time.Hour))
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if outcome != tt.wantOutcome {
				t.Errorf("outcome = %q, want %q", outcome, tt.wantOutcome)
			}
			if got := budgetsJSON(t, tt.np); got != tt.wantBudgets {
				t.Errorf("budgets = %s, want %s", got, tt.wantBudgets)
			}
			annotations := tt.np.GetAnnotations()
			switch {
			case err != nil || outcome == NotHeld:
				if !reflect.DeepEqual(tt.np, before) {
					t.Errorf("the NodePool changed although nothing was lifted")
				}
			default:
				if _, ok := annotations[karpenter.RolloutGuardAnnotation]; ok {
					t.Errorf("the guard's record is still there")
				}
				if at, ok := holdrecord.ResumedAt(annotations); !ok || !at.Equal(t0.Add(time.Hour)) || annotations["other"] != "kept" {
					t.Errorf("annotations = %v", annotations)
				}
			}
		})
	}
}

func TestReadMarkerRejectsForeignRecords(t *testing.T) {
	for _, raw := range []string{"yes", `{}`, `{"budget":null}`, `[1]`} {
		if m, err := holdrecord.ReadMarker(map[string]string{karpenter.RolloutGuardAnnotation: raw}); err == nil {
			t.Errorf("holdrecord.ReadMarker(%q) = %+v, want an error", raw, m)
		}
	}
}

func TestDetectFindsReplacementsWithoutReadyNodes(t *testing.T) {
	rollout := t0.Add(-time.Hour)
	claim := func(name string, launched time.Time, providerID string, conds ...state.Condition) *state.NodeClaim {
		nc := &state.NodeClaim{}
		nc.Name, nc.CreationTimestamp = name, metav1.NewTime(launched)
		nc.Status.ProviderID, nc.Status.Conditions = providerID, conds
		return nc
	}
	node := func(providerID string, ready corev1.ConditionStatus) *corev1.Node {
		n := &corev1.Node{}
		n.Spec.ProviderID = providerID
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
		return n
	}
	np := &state.NodePool{}
	np.Name = "default"
	pool := state.Pool{
		NodePool: np,
		NodeClaims: []*state.NodeClaim{
			claim("before-rollout", rollout.Add(-time.Minute), ""),
			claim("ready", t0.Add(-30*time.Minute), "p-ready"),
			claim("not-ready", t0.Add(-20*time.Minute), "p-not-ready"),
			claim("no-node", t0.Add(-16*time.Minute), "p-none"),
			claim("young", t0.Add(-5*time.Minute), ""),
			claim("younger", t0.Add(-2*time.Minute), ""),
			claim("drifted", t0.Add(-30*time.Minute), "", state.Condition{Type: "Drifted", Status: "True"}),
			claim("terminating", t0.Add(-30*time.Minute), "", state.Condition{Type: "InstanceTerminating", Status: "True"}),
		},
		Nodes: []*corev1.Node{node("p-ready", corev1.ConditionTrue), node("p-not-ready", corev1.ConditionFalse)},
	}
	stuck, next := Detect(pool, rollout, t0, 15*time.Minute)
	want := []Stuck{{"no-node", t0.Add(-16 * time.Minute)}, {"not-ready", t0.Add(-20 * time.Minute)}}
	if !reflect.DeepEqual(stuck, want) {
		t.Errorf("stuck = %+v, want %+v", stuck, want)
	}
	if want := t0.Add(10 * time.Minute); !next.Equal(want) {
		t.Errorf("next = %s, want %s (when \"young\" times out)", next, want)
	}

	np.Annotations = map[string]string{karpenter.RolloutGuardResumedAnnotation: t0.Add(-16 * time.Minute).Format(time.RFC3339)}
	if stuck, _ := Detect(pool, rollout, t0, 15*time.Minute); len(stuck) != 0 {
		t.Errorf("NodeClaims launched before the guard was lifted tripped it again: %+v", stuck)
	}
	if stuck, next := Detect(pool, time.Time{}, t0, 15*time.Minute); stuck != nil || !next.IsZero() {
		t.Errorf("no rollout, yet stuck %+v next %s", stuck, next)
	}
}

// FuzzLift feeds arbitrary records and budgets: Lift must never panic, and
// must either refuse without touching the budgets or leave every budget but
// the one it recorded.
func FuzzLift(f *testing.F) {
	f.Add(`{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1}`, `[{"nodes":"0","reasons":["Drifted"]},{"nodes":"0","reasons":["Drifted"]}]`)
	f.Add(`{"budget":{"nodes":"0"},"index":-4}`, `[{"nodes":"0"}]`)
	f.Add(`{"budget":{},"index":99}`, `{"not":"a list"}`)
	f.Add(`not json`, `[]`)
	f.Fuzz(func(t *testing.T, record, budgets string) {
		var b any
		if json.Unmarshal([]byte(budgets), &b) != nil {
			return
		}
		np := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "fuzz", "annotations": map[string]any{karpenter.RolloutGuardAnnotation: record}},
			"spec":     map[string]any{"disruption": map[string]any{"budgets": b}},
		}}
		before, _ := json.Marshal(b)
		outcome, m, err := Lift(np, t0)
		after, _, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "disruption", "budgets")
		afterJSON, _ := json.Marshal(after)
		if err != nil || outcome != Removed {
			if string(afterJSON) != string(before) {
				t.Fatalf("outcome %q (err %v) changed the budgets from %s to %s", outcome, err, before, afterJSON)
			}
			return
		}
		list := b.([]any)
		want, _ := json.Marshal(append(list[:m.Index:m.Index], list[m.Index+1:]...))
		if string(afterJSON) != string(want) {
			t.Fatalf("removed more than index %d: %s -> %s", m.Index, before, afterJSON)
		}
	})
}

func TestFreezeIsTheSameBudgetMarkedAsAFreeze(t *testing.T) {
	np := nodePool(t, `[{"nodes":"10%"}]`, nil)
	m, err := Freeze(np, t0, "bad AMI")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := budgetsJSON(t, np), `[{"nodes":"10%"},`+userZeroDrift+`]`; got != want {
		t.Errorf("budgets = %s, want %s", got, want)
	}
	read, err := holdrecord.ReadMarker(np.GetAnnotations())
	if err != nil || !read.Frozen() || read.Holder() != "a freeze" || !reflect.DeepEqual(read, m) {
		t.Errorf("marker = %+v (%v)", read, err)
	}
	if _, err := Freeze(np, t0, "again"); !errors.Is(err, ErrHeld) {
		t.Errorf("freezing a frozen NodePool: %v, want ErrHeld", err)
	}
	if _, err := Hold(np, t0, "guard"); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "a freeze holds it since 2026-01-05T09:00:00Z") {
		t.Errorf("the guard holding a frozen NodePool: %v", err)
	}
	outcome, lifted, err := Lift(np, t0.Add(time.Hour))
	if err != nil || outcome != Removed || !lifted.Frozen() || budgetsJSON(t, np) != `[{"nodes":"10%"}]` {
		t.Errorf("lifting the freeze: %s %+v %v, budgets %s", outcome, lifted, err, budgetsJSON(t, np))
	}
}

// TestFreezeReplacesARecordThatHoldsNothing: a record planted by anyone
// who may write the NodePool, one that vouches for no hold, must not make
// a freeze skip the NodePool as already held.
func TestFreezeReplacesARecordThatHoldsNothing(t *testing.T) {
	tests := []struct{ name, budgets, record string }{
		{"unreadable", `[{"nodes":"10%"}]`, "yes"},
		{"names another budget", `[{"nodes":"10%"},{"nodes":"0"}]`, `{"budget":{"nodes":"0"},"index":1,"since":"2099-01-01T00:00:00Z","reason":"forged"}`},
		{"its budget is not at its index", `[{"nodes":"10%"}]`, `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2099-01-01T00:00:00Z","reason":"forged"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			np := nodePool(t, tt.budgets, map[string]string{karpenter.RolloutGuardAnnotation: tt.record})
			m, err := Freeze(np, t0, "incident")
			if err != nil {
				t.Fatalf("freeze over a record that holds nothing: %v", err)
			}
			budgets, _, _ := unstructured.NestedSlice(np.Object, budgetsPath...)
			got, index, held := holdrecord.Held(np.GetAnnotations(), budgets)
			if !held || !got.Frozen() || index != m.Index || got.Reason != "incident" || !got.Since.Equal(t0) {
				t.Errorf("after the freeze: held %v at %d, record %+v; budgets %s", held, index, got, budgetsJSON(t, np))
			}
		})
	}
}

// TestRecordsWrittenBeforeFreezesAreGuardHolds: a record of an older
// karpgate (no "by") is recognised, read as the rollout guard's, and lifted.
func TestRecordsWrittenBeforeFreezesAreGuardHolds(t *testing.T) {
	const older = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-04T10:00:00Z","reason":"1 NodeClaim(s) launched during the drift rollout have no Ready Node after 15m0s: a-1"}`
	np := nodePool(t, `[{"nodes":"10%"},`+userZeroDrift+`]`, map[string]string{karpenter.RolloutGuardAnnotation: older})
	m, err := holdrecord.ReadMarker(np.GetAnnotations())
	if err != nil || m == nil || m.Frozen() || m.Holder() != "the rollout guard" || m.Index != 1 {
		t.Fatalf("older record = %+v (%v)", m, err)
	}
	outcome, _, err := Lift(np, t0)
	if err != nil || outcome != Removed || budgetsJSON(t, np) != `[{"nodes":"10%"}]` {
		t.Errorf("lifting an older record: %s %v, budgets %s", outcome, err, budgetsJSON(t, np))
	}
	// A guard hold written now has the same shape: no "by".
	fresh := nodePool(t, `[]`, nil)
	if _, err := Hold(fresh, t0, "stuck"); err != nil {
		t.Fatal(err)
	}
	if record := fresh.GetAnnotations()[karpenter.RolloutGuardAnnotation]; strings.Contains(record, `"by"`) {
		t.Errorf("a guard record carries by: %s", record)
	}
}
