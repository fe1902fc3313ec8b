package events

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/drift"
	"github.com/karpgate/karpgate/disruption/status"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

type change func(*status.NodePool)

func base(changes ...change) status.NodePool {
	p := status.NodePool{Name: "default", At: t0, Nodes: 10,
		Allowed:    map[budget.Reason]budget.Allowance{},
		NextChange: map[budget.Reason]status.Change{}}
	for _, r := range budget.Reasons {
		p.Allowed[r] = budget.Allowance{Count: 1, Limit: 1, Binding: []int{0}}
	}
	for _, c := range changes {
		c(&p)
	}
	return p
}

func allowed(r budget.Reason, a budget.Allowance) change {
	return func(p *status.NodePool) { p.Allowed[r] = a }
}

func invalidBudgets(causes ...string) change {
	return func(p *status.NodePool) {
		p.Invalid = causes
		for _, r := range budget.Reasons {
			p.Allowed[r] = budget.Allowance{Blocked: true, Cause: strings.Join(causes, "; ")}
		}
	}
}

func driftedN(n int) change {
	return func(p *status.NodePool) {
		p.Drift = drift.Summary{Total: n, ByReason: map[string]int{"AMIDrift": n}}
	}
}

func held(p *status.NodePool) {
	p.Guard = status.Guard{Held: true, Marker: &holdrecord.Marker{Index: 2, Reason: "stuck"}}
}

func frozen(p *status.NodePool) {
	p.Guard = status.Guard{Held: true, Frozen: true, Marker: &holdrecord.Marker{Index: 1, Reason: "bad AMI", By: holdrecord.ByFreeze}}
}

func TestDiffSaysOnlyWhatChanged(t *testing.T) {
	closedDrift := allowed(budget.Drifted, budget.Allowance{Count: 0, Limit: 0, Binding: []int{1}})
	tests := []struct {
		name    string
		prev    *status.NodePool
		cur     status.NodePool
		reasons []string
		notes   []string
	}{
		{"first sight of a valid pool says nothing", nil, base(driftedN(3), closedDrift), nil, nil},
		{"first sight of invalid budgets says so", nil, base(invalidBudgets("bad cron")), []string{BudgetInvalid}, []string{"bad cron"}},
		{"no change", ptr(base()), base(), nil, nil},
		{"a window closes for Drifted", ptr(base()), base(closedDrift), []string{WindowClosed}, []string{"Drifted disruptions no longer allowed"}},
		{"and opens again", ptr(base(closedDrift)), base(), []string{WindowOpened}, []string{"Drifted disruptions allowed again"}},
		{"a node starting to disrupt closes no window", ptr(base()),
			base(allowed(budget.Drifted, budget.Allowance{Count: 0, Limit: 1, Binding: []int{0}})), nil, nil},
		{"a limit growing is no window event", ptr(base()),
			base(allowed(budget.Empty, budget.Allowance{Count: 2, Limit: 2, Binding: []int{0}})), nil, nil},
		{"unlimited counts as open", ptr(base(closedDrift)), base(allowed(budget.Drifted, budget.Allowance{Unlimited: true})), []string{WindowOpened}, nil},
		{"budgets become invalid", ptr(base()), base(invalidBudgets("bad cron")), []string{BudgetInvalid}, []string{"zero voluntary disruptions"}},
		{"the same invalid budgets again", ptr(base(invalidBudgets("bad cron"))), base(invalidBudgets("bad cron")), nil, nil},
		{"a different invalid budget", ptr(base(invalidBudgets("bad cron"))), base(invalidBudgets("bad cron", "worse cron")), []string{BudgetInvalid}, []string{"worse cron"}},
		{"budgets fixed", ptr(base(invalidBudgets("bad cron"))), base(), []string{BudgetValid}, []string{"valid again"}},
		{"drift starts", ptr(base()), base(driftedN(2)), []string{DriftStarted}, []string{"2 NodeClaim(s) drifted (AMIDrift: 2)"}},
		{"drift progresses", ptr(base(driftedN(2))), base(driftedN(1)), nil, nil},
		{"drift finishes", ptr(base(driftedN(1))), base(), []string{DriftFinished}, nil},
		{"the guard holds", ptr(base()), base(held), []string{GuardHeld}, []string{"budgets[2]", "karpgate resume default"}},
		{"the guard lifts", ptr(base(held)), base(), []string{GuardLifted}, nil},
		{"a freeze", ptr(base()), base(frozen), []string{DriftFrozen}, []string{"budgets[1]", "freeze drift: bad AMI", "karpgate resume --all"}},
		{"the freeze lifts", ptr(base(frozen)), base(), []string{DriftUnfrozen}, nil},
		{"several at once, in a stable order", ptr(base()), base(closedDrift, driftedN(1), held), []string{WindowClosed, DriftStarted, GuardHeld}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(tt.prev, tt.cur, nil)
			var reasons []string
			for _, e := range got {
				reasons = append(reasons, e.Reason)
				if e.Action == "" || (e.Type != "Normal" && e.Type != "Warning") {
					t.Errorf("event %+v lacks an action or a valid type", e)
				}
			}
			if !reflect.DeepEqual(reasons, tt.reasons) {
				t.Fatalf("reasons = %v, want %v (%+v)", reasons, tt.reasons, got)
			}
			for _, want := range tt.notes {
				if !anyNote(got, want) {
					t.Errorf("no note contains %q: %+v", want, got)
				}
			}
		})
	}
}

func anyNote(events []Event, s string) bool {
	for _, e := range events {
		if strings.Contains(e.Note, s) {
			return true
		}
	}
	return false
}

func ptr(p status.NodePool) *status.NodePool { return &p }

func TestDiffKeepsNotesWithinTheAPILimit(t *testing.T) {
	long := strings.Repeat("é", MaxNoteLength)
	got := Diff(nil, base(invalidBudgets(long)), nil)
	if len(got) != 1 || len(got[0].Note) > MaxNoteLength || !strings.HasSuffix(got[0].Note, "...") || !utf8.ValidString(got[0].Note) {
		t.Errorf("note of %d bytes: %q...", len(got[0].Note), got[0].Note[:40])
	}
}

// TestDiffReadsNextChangeInTheDisplayZone: the instant stays RFC 3339 UTC
// (scripts parse it) and its local reading follows.
func TestDiffReadsNextChangeInTheDisplayZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	next := t0.Add(8 * time.Hour)
	withNext := func(p *status.NodePool) {
		p.NextChange[budget.Drifted] = status.Change{At: &next, To: &budget.Allowance{Unlimited: true}}
	}
	closedDrift := allowed(budget.Drifted, budget.Allowance{Binding: []int{1}})
	for loc, want := range map[*time.Location]string{
		nil:   "next change of Drifted at 2026-01-05T17:00:00Z",
		paris: "next change of Drifted at 2026-01-05T17:00:00Z (Mon 18:00 CET; Karpenter computes in UTC)",
	} {
		got := Diff(ptr(base()), base(closedDrift, withNext), loc)
		if len(got) != 1 || !strings.HasSuffix(got[0].Note, want) {
			t.Errorf("in %v: %+v, want a note ending %q", loc, got, want)
		}
	}
}
