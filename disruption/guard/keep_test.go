package guard

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/internal/karpenter"
)

func poolJSON(t *testing.T, budgets string, annotations map[string]string) map[string]any {
	t.Helper()
	ann, _ := json.Marshal(annotations)
	var out map[string]any
	if err := json.Unmarshal([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"web","annotations":`+string(ann)+`},"spec":{"disruption":{"budgets":`+budgets+`}}}`), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeepHoldsAcrossWritesUntilResumed: a valid hold stays through every
// write but a resume, which ends it whatever its since; a record that
// vouches for no budget keeps nothing.
func TestKeepHoldsAcrossWritesUntilResumed(t *testing.T) {
	const (
		freeze = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-05T08:00:00Z","reason":"incident 42","by":"freeze"}`
		// Stored before karpgate refused records dated in the future.
		forged = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2099-01-01T00:00:00Z","reason":"incident 42","by":"freeze"}`
		// {nodes: "0"} holds every reason: no budget karpgate adds.
		allReasons = `{"budget":{"nodes":"0"},"index":1,"since":"2026-01-05T08:00:00Z","reason":"incident 42","by":"freeze"}`
		held       = `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`
		resumed    = karpenter.RolloutGuardResumedAnnotation
		guardKey   = karpenter.RolloutGuardAnnotation
	)
	stored := poolJSON(t, held, map[string]string{guardKey: freeze})
	for _, tt := range []struct {
		name        string
		old, write  map[string]any
		wantBudgets string // "" means nothing to keep
		wantIndex   int
		restored    bool
	}{
		{"not held", poolJSON(t, `[{"nodes":"10%"}]`, nil), poolJSON(t, `[]`, nil), "", 0, false},
		{"a write that keeps the hold", stored, poolJSON(t, held, map[string]string{guardKey: freeze, "team": "web"}), "", 0, false},
		{"Git's budgets, record kept (server-side apply)", stored, poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{guardKey: freeze}),
			held, 1, true},
		{"Git changed the budgets meanwhile", stored, poolJSON(t, `[{"nodes":"20%"},{"nodes":"1","reasons":["Empty"]}]`, map[string]string{guardKey: freeze}),
			`[{"nodes":"20%"},{"nodes":"1","reasons":["Empty"]},{"nodes":"0","reasons":["Drifted"]}]`, 2, true},
		{"budgets and record dropped (replace)", stored, poolJSON(t, `[{"nodes":"10%"}]`, nil), held, 1, true},
		{"record dropped, budget kept", stored, poolJSON(t, held, nil), held, 1, false},
		{"record changed", stored, poolJSON(t, held, map[string]string{guardKey: `{"budget":{"nodes":"0"},"index":0,"since":"2020-01-01T00:00:00Z"}`}), held, 1, false},
		{"resume", stored, poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{resumed: "2026-01-05T09:00:00Z"}), "", 0, false},
		{"a resume from a clock behind the one that froze", stored, poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{resumed: "2026-01-04T09:00:00Z"}), "", 0, false},
		{"a resume of a hold since 2099", poolJSON(t, held, map[string]string{guardKey: forged}), poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{resumed: "2026-11-28T08:00:00Z"}), "", 0, false},
		{"a hold since 2099 is kept until resumed", poolJSON(t, held, map[string]string{guardKey: forged}), poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{guardKey: forged}), held, 1, true},
		{"a new resumed instant that keeps the record is no resume", stored, poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{guardKey: freeze, resumed: "2026-01-05T09:00:00Z"}), held, 1, true},
		{"an older resumed instant (Git exported after an earlier resume) is no resume",
			poolJSON(t, held, map[string]string{guardKey: freeze, resumed: "2026-01-06T00:00:00Z"}), poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{resumed: "2026-01-04T00:00:00Z"}), held, 1, true},
		{"a stored instant no clock wrote binds no resume",
			poolJSON(t, held, map[string]string{guardKey: freeze, resumed: "2099-01-01T00:00:00Z"}), poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{resumed: "2026-11-28T08:00:00Z"}), "", 0, false},
		{"the record handed to another holder with a later instant",
			stored, poolJSON(t, held, map[string]string{guardKey: `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-05T09:00:00Z","reason":"wave 2","by":"rolloutplan/fleet"}`, resumed: "2026-01-05T09:00:00Z"}), "", 0, false},
		{"an unreadable record is not kept", poolJSON(t, held, map[string]string{guardKey: "{"}), poolJSON(t, `[{"nodes":"10%"}]`, nil), "", 0, false},
		{"a record of another budget is not kept", poolJSON(t, `[{"nodes":"10%"},{"nodes":"0"}]`, map[string]string{guardKey: allReasons}), poolJSON(t, `[{"nodes":"10%"}]`, nil), "", 0, false},
		{"a record whose budget is gone is not kept", poolJSON(t, `[{"nodes":"10%"}]`, map[string]string{guardKey: freeze}), poolJSON(t, `[{"nodes":"10%"}]`, nil), "", 0, false},
		{"a record whose budget moved is not kept", poolJSON(t, `[{"nodes":"0","reasons":["Drifted"]},{"nodes":"10%"}]`, map[string]string{guardKey: freeze}), poolJSON(t, `[{"nodes":"10%"}]`, nil), "", 0, false},
		{"no budgets at all", stored, poolJSON(t, `null`, map[string]string{guardKey: freeze}), `[{"nodes":"0","reasons":["Drifted"]}]`, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Keep(tt.write, tt.old, time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantBudgets == "" {
				if k != nil {
					t.Fatalf("kept %+v, want nothing to keep", k)
				}
				return
			}
			if k == nil {
				t.Fatal("nothing kept")
			}
			got, _ := json.Marshal(k.Budgets)
			if string(got) != tt.wantBudgets || k.Marker.Index != tt.wantIndex || k.Restored != tt.restored {
				t.Errorf("budgets %s index %d restored %v, want %s %d %v", got, k.Marker.Index, k.Restored, tt.wantBudgets, tt.wantIndex, tt.restored)
			}
			m, err := holdrecord.ReadMarker(map[string]string{guardKey: k.Record})
			if err != nil || !m.Frozen() || m.Reason != "incident 42" || m.Index != tt.wantIndex {
				t.Errorf("record %s: %+v %v", k.Record, m, err)
			}
		})
	}
}

// TestHandoversInOneSecondAreResumes: a plan's hold, a freeze laid over it
// and the freeze lifted, all in the same second (a person who freezes by
// mistake and resumes at once), are each a resume the mutating webhook lets
// through: every handover sets a resume instant later than the stored one.
func TestHandoversInOneSecondAreResumes(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	np := nodePool(t, `[{"nodes":"10%"}]`, nil)
	if _, err := HoldForPlan(np, now, "wave 2 waits", "fleet"); err != nil {
		t.Fatal(err)
	}
	planHeld := np.DeepCopy()
	m, _ := holdrecord.ReadMarker(np.GetAnnotations())
	if _, err := freezeOver(np, m, now, "INC-7"); err != nil {
		t.Fatal(err)
	}
	if k, err := Keep(np.Object, planHeld.Object, now); err != nil || k != nil {
		t.Fatalf("freeze over the plan's hold: kept %+v (%v), want the handover to pass", k, err)
	}
	frozen := np.DeepCopy()
	if outcome, _, err := Lift(np, now); err != nil || outcome != Returned {
		t.Fatalf("lift: %s, %v; want %s", outcome, err, Returned)
	}
	if k, err := Keep(np.Object, frozen.Object, now); err != nil || k != nil {
		t.Fatalf("the freeze handed back to the plan: kept %+v (%v), want the handover to pass", k, err)
	}
	if m, _ := holdrecord.ReadMarker(np.GetAnnotations()); m == nil || m.RolloutPlan() != "fleet" {
		t.Errorf("after lift the record is %+v, want the plan's hold", m)
	}
}
