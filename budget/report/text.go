package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/karpgate/karpgate/budget"
)

// WriteText writes the report for people: per NodePool its budgets, their
// problems, then per reason the stretches of time with what they allow.
func WriteText(w io.Writer, r *Report) error {
	tw := &textWriter{w: w, r: r}
	if len(r.Pools) == 0 {
		tw.printf("no NodePool found in the input\n")
		return tw.err
	}
	for i, p := range r.Pools {
		if i > 0 {
			tw.printf("\n")
		}
		tw.pool(p)
	}
	invalid := 0
	for _, p := range r.Pools {
		if p.ReadError != nil || len(p.Problems) > 0 {
			invalid++
		}
	}
	tw.printf("\n%d NodePool(s) explained, %d with invalid budgets.\n", len(r.Pools), invalid)
	return tw.err
}

type textWriter struct {
	w   io.Writer
	r   *Report
	err error
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func (t *textWriter) pool(p *Pool) {
	r := t.r
	t.printf("NodePool %s  (%s:%d, %s)\n", p.Name, p.Source, p.Line, p.APIVersion)
	if p.Note != "" {
		t.printf("  note: %s\n", p.Note)
	}
	if p.ReadError != nil {
		t.printf("  cannot read budgets: %s\n", strings.ReplaceAll(p.ReadError.Error(), "\n", "\n    "))
		return
	}
	t.printf("  %s; %s to %s %s%s\n", countWords(r.Options),
		t.clock(r.From, time.Time{}), t.clock(r.To, time.Time{}), zoneName(r.Location, r.From), utcNote(r.Location))
	shifts := r.Shifts()
	for _, s := range shifts {
		t.printf("  %s\n", r.ShiftWords(s))
	}
	if len(p.Budgets) == 0 {
		t.printf("  budgets: [] (no budget: every reason is unlimited)\n")
	}
	local := r.LocalEdges(p)
	for _, b := range p.Budgets {
		t.printf("  %s\n", b.Name())
		if note := p.BudgetNotes[b.Index]; note != "" {
			t.printf("    note: %s\n", note)
		}
		if edges := local[b.Index]; edges != "" {
			t.printf("    local time: %s\n", edges)
		}
	}
	if len(p.Problems) > 0 {
		t.printf("  problems:\n")
		for _, pr := range p.Problems {
			t.printf("    %s:%d:%d %s [%s]\n", p.Source, pr.Line, pr.Column, pr.Error(), effectWords(pr.Effect))
		}
	}
	if p.Rejected() {
		t.printf("  not explained: %s\n", rejectedWords)
		return
	}
	if cause := p.BlockedThroughout(); cause != "" {
		t.printf("  blocked: every reason, because %s\n", cause)
		return
	}
	for i, reason := range r.Reasons {
		stretches := p.Timeline[reason]
		if same := sameAsEarlier(p, r.Reasons, i); same != "" {
			t.printf("  %s: same as %s\n", reason, same)
			continue
		}
		t.printf("  %s\n", reason)
		next := 0 // the next shift to call out, after the stretch it falls in
		for _, s := range stretches {
			span := "whole range"
			if len(stretches) > 1 {
				span = t.clock(s.From, time.Time{}) + " → " + t.clock(s.To, s.From)
			}
			t.printf("    %-36s %-9s  %s\n", span, s.String(), p.Why(reason, s.Allowance, r.Counts()))
			for ; len(stretches) > 1 && next < len(shifts) && shifts[next].At.Before(s.To); next++ {
				sh := shifts[next]
				t.printf("    ~ clocks change %s within the stretch above: %s, %s\n", t.clock(sh.At, time.Time{}), sh.After.Abbreviation, budget.UTCOffset(sh.After.Offset))
			}
		}
	}
}

// sameAsEarlier names an earlier reason with the same timeline as reason i.
func sameAsEarlier(p *Pool, reasons []budget.Reason, i int) string {
	for j := 0; j < i; j++ {
		a, b := p.Timeline[reasons[i]], p.Timeline[reasons[j]]
		if SameStretches(a, b) {
			return string(reasons[j])
		}
	}
	return ""
}

// countWords says the counts asked about: "12 nodes, 1 disrupting, 2 not
// Ready (Karpenter v1.15)".
func countWords(o Options) string {
	s := fmt.Sprintf("%d nodes, %d disrupting", o.Nodes, o.Disrupting)
	if o.NotReady > 0 {
		s += fmt.Sprintf(", %d not Ready", o.NotReady)
	}
	if o.Karpenter != "" {
		s += fmt.Sprintf(" (Karpenter %s)", o.Karpenter)
	}
	return s
}

// clock formats t in the display zone; the date is left out when t is on
// the same day as since.
func (t *textWriter) clock(at, since time.Time) string {
	at = at.In(t.r.Location)
	if !since.IsZero() {
		s := since.In(t.r.Location)
		if s.YearDay() == at.YearDay() && s.Year() == at.Year() {
			return at.Format("15:04")
		}
	}
	return at.Format("Mon 02 Jan 15:04")
}

func zoneName(loc *time.Location, at time.Time) string {
	name, _ := at.In(loc).Zone()
	if loc.String() != name && loc != time.UTC {
		return loc.String() + " (" + name + ")"
	}
	return name
}

func utcNote(loc *time.Location) string {
	if loc == time.UTC {
		return ""
	}
	return "; Karpenter computes in UTC"
}

func effectWords(e budget.Effect) string {
	if e == budget.BlocksEveryReason {
		return "accepted by the API server; blocks every reason"
	}
	return "rejected by the API server"
}

// rejectedWords says why a rejected NodePool gets no timeline.
const rejectedWords = "the API server rejects this NodePool as written, so Karpenter never runs these budgets; fix the problems above"
