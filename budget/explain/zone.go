package explain

import (
	"fmt"
	"time"

	"github.com/karpgate/karpgate/budget"
)

// Shifts are the display zone's daylight-saving changes within the report's
// range. Karpenter's windows stay put in UTC, so each one moves every window
// on the local clock: the report calls every one of them out.
func (r *Report) Shifts() []budget.Shift {
	return budget.Shifts(r.Location, r.From, r.To)
}

// ShiftWords says what a shift does to the windows: "clocks change on 29
// March at 03:00, CET (UTC+01:00) to CEST (UTC+02:00): windows, fixed in
// UTC, open and close 1h later on this clock".
func (r *Report) ShiftWords(s budget.Shift) string {
	move := s.After.Offset - s.Before.Offset
	direction := "later"
	if move < 0 {
		direction, move = "earlier", -move
	}
	return fmt.Sprintf("clocks change on %s at %s, %s to %s: windows, fixed in UTC, open and close %s %s on this clock",
		budget.ShiftDate(s, r.Location, r.From, r.To), s.At.In(r.Location).Format("15:04"), s.Before, s.After, shortDuration(move), direction)
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

func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d > time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
}
