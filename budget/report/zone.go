package report

import (
	"time"

	"github.com/karpgate/karpgate/budget"
)

// Shifts are the display zone's daylight-saving changes within the report's
// range. Karpenter's windows stay put in UTC, so each one moves every window
// on the local clock: the report calls every one of them out.
func (r *Report) Shifts() []budget.Shift {
	return budget.Shifts(r.Location, r.From, r.To)
}

// ShiftWords says what a shift does to the windows; see budget.ShiftNote.
func (r *Report) ShiftWords(s budget.Shift) string {
	return budget.ShiftNote(s, r.Location, r.From, r.To)
}

// LocalEdges says when each scheduled budget's windows open and close on
// the display clock, by budget index; empty in UTC.
func (r *Report) LocalEdges(p *Pool) map[int]string {
	out := map[int]string{}
	if r.Location == time.UTC || p.ReadError != nil || p.Rejected() {
		return out
	}
	for _, c := range budget.CompileSet(p.Budgets).Budgets() {
		if s := c.LocalEdges(r.Location, r.From, r.To); s != "" {
			out[c.Index] = s
		}
	}
	return out
}
