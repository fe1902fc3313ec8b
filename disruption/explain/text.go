package explain

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/status"
)

// WriteText writes the explanation for people, times in UTC with their
// reading in loc (nil: UTC only).
func WriteText(w io.Writer, e *Explanation, loc *time.Location) error {
	if loc == nil {
		loc = time.UTC
	}
	t := &textWriter{w: w, e: e, loc: loc}
	t.header()
	t.list("Stops every reason", e.StopsEveryReason)
	if len(e.Pods.Blockers) > 0 {
		t.printf("\nPods that block eviction:\n")
		for _, b := range e.Pods.Blockers {
			t.printf("  - %s\n", b.Message)
		}
	}
	if len(e.Pods.Ignored) > 0 {
		t.printf("\nIgnored do-not-disrupt annotations:\n")
		for _, i := range e.Pods.Ignored {
			t.printf("  - %s\n", i.Message)
		}
	}
	for _, r := range e.Reasons {
		t.reason(r)
	}
	return t.err
}

type textWriter struct {
	w   io.Writer
	e   *Explanation
	loc *time.Location
	err error
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// when writes an instant with how far it is from the explanation's time.
func (t *textWriter) when(at time.Time) string {
	d := at.Sub(t.e.At)
	rel := "in " + status.HumanDuration(d)
	if d < 0 {
		rel = status.HumanDuration(-d) + " ago"
	}
	return budget.InZone(at, t.loc) + ", " + rel
}

func (t *textWriter) header() {
	e := t.e
	switch {
	case e.NodeClaim != "" && e.Node != "":
		t.printf("NodeClaim %s (node %s)", e.NodeClaim, e.Node)
	case e.NodeClaim != "":
		t.printf("NodeClaim %s (no node yet)", e.NodeClaim)
	default:
		t.printf("Node %s (no NodeClaim)", e.Node)
	}
	if e.NodePool != "" {
		t.printf(", NodePool %s", e.NodePool)
	}
	t.printf("\nat %s; Karpenter computes budget windows in UTC\n", budget.InZone(e.At, t.loc))
	if e.Judged != nil {
		t.printf("judged by %s\n", e.Judged.DescribeWithNote())
	}
	if e.NodeClaim == "" {
		return
	}
	initialized := "initialized"
	if !e.Initialized {
		initialized = "not initialized"
	}
	t.printf("  %s; the NodePool counts %d node(s), %d disrupting%s\n", initialized, e.Nodes, e.Disrupting, disruptingList(e.DisruptingNodes))
	if e.NotReady > 0 && slices.ContainsFunc(e.Reasons, func(r Reason) bool { return r.Reason == budget.Unhealthy }) {
		t.printf("  %d of the disrupting node(s) are only not Ready: node repair's budget (Unhealthy) does not count them\n", e.NotReady)
	}
	switch d := e.Drift; {
	case d.Drifted:
		t.printf("  drift: Drifted (%s) since %s\n", d.Reason, t.when(*d.Since))
	case d.Pending != nil:
		t.printf("  drift: not yet; its image %s is no longer the newest compatible AMI %s\n", d.Pending.ImageID, orNone(d.Pending.Newest))
	default:
		t.printf("  drift: not drifted\n")
	}
	x := e.Expiry
	switch {
	case x.ExpiresAt != nil && x.Expired:
		t.printf("  expiry: expireAfter %s: expired at %s; Karpenter deletes expired NodeClaims whatever the budgets\n", x.ExpireAfter, t.when(*x.ExpiresAt))
	case x.ExpiresAt != nil:
		t.printf("  expiry: expireAfter %s: expires at %s; expiry is forceful: no budget, do-not-disrupt or PodDisruptionBudget stops it\n", x.ExpireAfter, t.when(*x.ExpiresAt))
	case x.ExpireAfter != "":
		t.printf("  expiry: expireAfter %s: it never expires\n", x.ExpireAfter)
	default:
		t.printf("  expiry: no expireAfter: it never expires\n")
	}
	if x.TerminationGracePeriod == "" {
		t.printf("  terminationGracePeriod: not set; a drain blocked by PodDisruptionBudgets or do-not-disrupt pods waits until they allow eviction\n")
	} else {
		t.printf("  terminationGracePeriod: %s; once draining starts, pods that block eviction are deleted within it, and drift ignores them\n", x.TerminationGracePeriod)
	}
	if x.DeletingSince != nil {
		t.printf("  deleting since %s", t.when(*x.DeletingSince))
		if x.DrainDeadline != nil {
			t.printf("; its drain is forced at %s", t.when(*x.DrainDeadline))
		}
		t.printf("\n")
	}
}

func (t *textWriter) list(title string, stops []Stop) {
	if len(stops) == 0 {
		return
	}
	t.printf("\n%s:\n", title)
	for _, s := range stops {
		t.printf("  - %s\n", t.stop(s, t.e.Disrupting))
	}
}

// stop says a stop in words; disrupting is how many nodes use up the
// budget of the stop's reason.
func (t *textWriter) stop(s Stop, disrupting int) string {
	msg := s.Message
	switch {
	case s.Kind == StopBudget && s.Until != nil:
		msg += "; next allows one at " + t.when(*s.Until)
	case s.Kind == StopBudget && s.Free != nil && !s.Free.After(t.e.At):
		msg += fmt.Sprintf("; it allows one as soon as one of the %d node(s) disrupting is done", disrupting)
	case s.Kind == StopBudget && s.Free != nil:
		msg += fmt.Sprintf("; it allows one from %s, if the %d node(s) disrupting now are done by then", t.when(*s.Free), disrupting)
	case s.Kind == StopBudget:
		msg += fmt.Sprintf("; no window within %s allows one", status.HumanDuration(status.Horizon))
	case s.Until != nil:
		msg += "; until " + t.when(*s.Until)
	}
	return msg
}

func (t *textWriter) reason(r Reason) {
	verdict := "NOT a candidate"
	if r.Candidate {
		verdict = "candidate now"
	}
	t.printf("\n%s: %s\n", r.Reason, verdict)
	if len(t.e.StopsFor(r.Reason)) > 0 && len(r.Stops) == 0 {
		t.printf("  - only what stops every reason (above)\n")
	}
	disrupting := t.e.Disrupting
	if r.Reason == budget.Unhealthy {
		disrupting -= t.e.NotReady
	}
	for _, s := range r.Stops {
		t.printf("  - %s\n", t.stop(s, disrupting))
	}
	if b := r.Budget; b.Why != "" && !hasBudgetStop(r) {
		t.printf("  budget: %s allowed now (%s)", b.Allowed, b.Why)
		if b.NextChange != nil {
			t.printf("; changes at %s", t.when(*b.NextChange))
		}
		t.printf("\n")
	}
	for _, n := range r.Notes {
		t.printf("  note: %s\n", n)
	}
}

func hasBudgetStop(r Reason) bool {
	for _, s := range r.Stops {
		if s.Kind == StopBudget || s.Kind == StopBudgetsInvalid {
			return true
		}
	}
	return false
}

func disruptingList(nodes []DisruptingNode) string {
	if len(nodes) == 0 {
		return ""
	}
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = n.Node + ": " + n.Why
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func orNone(s string) string {
	if s == "" {
		return "(none compatible)"
	}
	return s
}
