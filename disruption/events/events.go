package events

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/status"
)

// Event reasons.
const (
	WindowOpened   = "DisruptionWindowOpened"
	WindowClosed   = "DisruptionWindowClosed"
	BudgetInvalid  = "DisruptionBudgetInvalid"
	BudgetValid    = "DisruptionBudgetValid"
	DriftStarted   = "DriftStarted"
	DriftFinished  = "DriftFinished"
	GuardHeld      = "RolloutGuardHeld"
	GuardLifted    = "RolloutGuardLifted"
	DriftFrozen    = "DriftFrozen"
	DriftUnfrozen  = "DriftUnfrozen"
	actionBudgets  = "EvaluateBudgets"
	actionDrift    = "TrackDrift"
	actionGuarding = "GuardRollout"
)

// Event is one Kubernetes Event for a NodePool.
type Event struct {
	Type   string // corev1.EventTypeNormal or corev1.EventTypeWarning
	Reason string
	Action string
	Note   string
}

// MaxNoteLength is the longest note the events.k8s.io API accepts.
const MaxNoteLength = 1024

// Diff returns the events that the change from prev to cur deserves. prev is
// nil when the NodePool was not seen before (the loop just started or became
// leader): then only invalid budgets are reported, since nothing is known to
// have changed. Instants are written in UTC, with their reading in loc
// (karpgate.yaml's timezone) when that is not UTC.
func Diff(prev *status.NodePool, cur status.NodePool, loc *time.Location) []Event {
	var out []Event
	if prev == nil {
		if cur.Blocked() {
			out = append(out, invalid(cur))
		}
		return capNotes(out)
	}
	switch {
	case cur.Blocked() && !slices.Equal(prev.Invalid, cur.Invalid):
		out = append(out, invalid(cur))
	case !cur.Blocked() && prev.Blocked():
		out = append(out, Event{corev1.EventTypeNormal, BudgetValid, actionBudgets,
			"Budgets are valid again; " + allowedNote(cur, loc)})
	}
	if !cur.Blocked() && !prev.Blocked() {
		out = append(out, windows(*prev, cur, loc)...)
	}
	out = append(out, driftChanges(*prev, cur)...)
	return capNotes(append(out, guardChanges(*prev, cur)...))
}

// capNotes shortens notes the API would reject; a long list of NodeClaims
// or causes is the usual culprit.
func capNotes(events []Event) []Event {
	for i, e := range events {
		if len(e.Note) > MaxNoteLength {
			cut := MaxNoteLength - len("...")
			for cut > 0 && !utf8.RuneStart(e.Note[cut]) {
				cut--
			}
			events[i].Note = e.Note[:cut] + "..."
		}
	}
	return events
}

func invalid(cur status.NodePool) Event {
	return Event{corev1.EventTypeWarning, BudgetInvalid, actionBudgets,
		"Karpenter allows zero voluntary disruptions of this NodePool, for every reason: " + strings.Join(cur.Invalid, "; ")}
}

func closed(a budget.Allowance) bool { return !a.Unlimited && (a.Blocked || a.Limit == 0) }

// windows reports the reasons whose window opened or closed. A reason the
// previous status did not have (Karpenter's CRDs upgraded to a release
// with Unhealthy) has no window to compare with.
func windows(prev, cur status.NodePool, loc *time.Location) []Event {
	var opened, shut []string
	for _, r := range cur.Lanes() {
		if !slices.Contains(prev.Lanes(), r) {
			continue
		}
		was, is := closed(prev.Allowed[r]), closed(cur.Allowed[r])
		switch {
		case was && !is:
			opened = append(opened, string(r))
		case !was && is:
			shut = append(shut, string(r))
		}
	}
	var out []Event
	if len(opened) > 0 {
		out = append(out, Event{corev1.EventTypeNormal, WindowOpened, actionBudgets,
			fmt.Sprintf("%s disruptions allowed again; %s", strings.Join(opened, ", "), allowedNote(cur, loc))})
	}
	if len(shut) > 0 {
		out = append(out, Event{corev1.EventTypeNormal, WindowClosed, actionBudgets,
			fmt.Sprintf("%s disruptions no longer allowed; %s", strings.Join(shut, ", "), allowedNote(cur, loc))})
	}
	return out
}

// allowedNote summarises the allowances and the next change.
func allowedNote(p status.NodePool, loc *time.Location) string {
	lanes := p.Lanes()
	parts := make([]string, len(lanes))
	for i, r := range lanes {
		parts[i] = fmt.Sprintf("%s=%s", r, p.Allowed[r])
	}
	note := "allowed now: " + strings.Join(parts, " ")
	if at, reasons := p.Earliest(); !at.IsZero() {
		names := make([]string, len(reasons))
		for i, r := range reasons {
			names[i] = string(r)
		}
		note += fmt.Sprintf("; next change of %s at %s", strings.Join(names, ", "), at.UTC().Format(time.RFC3339))
		if loc != nil && loc != time.UTC {
			note += " (" + at.In(loc).Format("Mon 15:04 MST") + "; Karpenter computes in UTC)"
		}
	}
	return note
}

func driftChanges(prev, cur status.NodePool) []Event {
	switch {
	case prev.Drift.Total == 0 && cur.Drift.Total > 0:
		return []Event{{corev1.EventTypeNormal, DriftStarted, actionDrift,
			fmt.Sprintf("%d NodeClaim(s) drifted (%s); Drifted disruptions allowed now: %s", cur.Drift.Total, byReason(cur), cur.Allowed[budget.Drifted])}}
	case prev.Drift.Total > 0 && cur.Drift.Total == 0:
		return []Event{{corev1.EventTypeNormal, DriftFinished, actionDrift, "No drifted NodeClaims are left"}}
	}
	return nil
}

func byReason(p status.NodePool) string {
	var parts []string
	for _, r := range p.Drift.Reasons() {
		parts = append(parts, fmt.Sprintf("%s: %d", r, p.Drift.ByReason[r]))
	}
	return strings.Join(parts, ", ")
}

func guardChanges(prev, cur status.NodePool) []Event {
	switch {
	case !prev.Guard.Held && cur.Guard.Frozen:
		return []Event{{corev1.EventTypeWarning, DriftFrozen, actionGuarding,
			fmt.Sprintf("karpgate added budget spec.disruption.budgets[%d] {nodes: \"0\", reasons: [Drifted]} to freeze drift: %s; run `karpgate resume %s` (or `karpgate resume --all`) to lift it",
				cur.Guard.Marker.Index, cur.Guard.Marker.Reason, cur.Name)}}
	case prev.Guard.Frozen && !cur.Guard.Held:
		return []Event{{corev1.EventTypeNormal, DriftUnfrozen, actionGuarding, "Drift is no longer frozen"}}
	case !prev.Guard.Held && cur.Guard.Held:
		return []Event{{corev1.EventTypeWarning, GuardHeld, actionGuarding,
			fmt.Sprintf("karpgate added budget spec.disruption.budgets[%d] {nodes: \"0\", reasons: [Drifted]} to hold the drift rollout: %s; run `karpgate resume %s` to lift it",
				cur.Guard.Marker.Index, cur.Guard.Marker.Reason, cur.Name)}}
	case prev.Guard.Held && !cur.Guard.Held:
		return []Event{{corev1.EventTypeNormal, GuardLifted, actionGuarding, "The rollout guard no longer holds drift"}}
	}
	return nil
}
