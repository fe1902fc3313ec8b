package budget

import (
	"fmt"
	"strings"
	"time"
)

// Karpenter computes every window in UTC. People read them on a local
// clock, where a window that opens at 09:00 UTC opens at 10:00 in Paris in
// winter and at 11:00 in summer. The functions below say that, calling out
// every daylight-saving shift of the display zone in a range; they change
// nothing about when a window is active.

// ZoneState is a zone's abbreviation and UTC offset over a stretch of time.
type ZoneState struct {
	Abbreviation string        `json:"abbreviation"`
	Offset       time.Duration `json:"offset"`
}

// String reads "CET (UTC+01:00)".
func (z ZoneState) String() string { return z.Abbreviation + " (" + UTCOffset(z.Offset) + ")" }

// UTCOffset writes an offset as "UTC+01:00", "UTC-04:00" or "UTC".
func UTCOffset(d time.Duration) string {
	if d == 0 {
		return "UTC"
	}
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// Shift is a change of a zone's UTC offset: daylight saving time starting or
// ending, or a zone changing its standard time.
type Shift struct {
	// At is the instant of the change.
	At     time.Time `json:"at"`
	Before ZoneState `json:"before"`
	After  ZoneState `json:"after"`
}

// stateAt is the zone in effect at t.
func stateAt(loc *time.Location, t time.Time) ZoneState {
	name, offset := t.In(loc).Zone()
	return ZoneState{Abbreviation: name, Offset: time.Duration(offset) * time.Second}
}

// Shifts lists the offset changes of loc in (from, to), in order. UTC and
// zones without daylight saving time have none. Periods that differ only in
// the tz database's bookkeeping (same offset, same abbreviation) are not
// shifts.
func Shifts(loc *time.Location, from, to time.Time) []Shift {
	if loc == nil {
		return nil
	}
	var out []Shift
	t := from
	for t.Before(to) {
		_, end := t.In(loc).ZoneBounds()
		if end.IsZero() || !end.Before(to) || !end.After(t) {
			break
		}
		before, after := stateAt(loc, t), stateAt(loc, end)
		if before != after {
			out = append(out, Shift{At: end.UTC(), Before: before, After: after})
		}
		t = end
	}
	return out
}

// LocalClock says what a UTC clock time reads on loc's clock over [from, to),
// with every shift in between: "09:00 UTC is 10:00 CET until 29 March, then
// 11:00 CEST". A reading on another day says so ("23:30 UTC is 00:30 CET the
// next day"); the year is added to dates when the range spans two years.
func LocalClock(hour, minute int, loc *time.Location, from, to time.Time) string {
	utc := fmt.Sprintf("%02d:%02d UTC", hour, minute)
	if loc == nil || loc == time.UTC {
		return utc
	}
	clockAt := time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute
	shifts := Shifts(loc, from, to)
	var b strings.Builder
	b.WriteString(utc + " is " + reading(clockAt, stateAt(loc, from)))
	for _, s := range shifts {
		fmt.Fprintf(&b, " until %s, then %s", ShiftDate(s, loc, from, to), reading(clockAt, s.After))
	}
	return b.String()
}

// reading is the local clock for a UTC time of day in a zone state.
func reading(clockAt time.Duration, z ZoneState) string {
	local := clockAt + z.Offset
	day := ""
	switch {
	case local < 0:
		local += 24 * time.Hour
		day = " the day before"
	case local >= 24*time.Hour:
		local -= 24 * time.Hour
		day = " the next day"
	}
	return fmt.Sprintf("%02d:%02d %s%s", int(local/time.Hour), int(local%time.Hour/time.Minute), z.Abbreviation, day)
}

// ShiftDate is the local date of a shift, "29 March", with the year when
// [from, to) spans two calendar years.
func ShiftDate(s Shift, loc *time.Location, from, to time.Time) string {
	at := s.At.In(loc)
	if from.In(loc).Year() != to.Add(-time.Nanosecond).In(loc).Year() {
		return at.Format("2 January 2006")
	}
	return at.Format("2 January")
}

// ShiftNote says what a shift does to budget windows: "clocks change on 29
// March at 03:00, CET (UTC+01:00) to CEST (UTC+02:00): windows, fixed in
// UTC, open and close 1h later on this clock".
func ShiftNote(s Shift, loc *time.Location, from, to time.Time) string {
	move := s.After.Offset - s.Before.Offset
	direction := "later"
	if move < 0 {
		direction, move = "earlier", -move
	}
	return fmt.Sprintf("clocks change on %s at %s, %s to %s: windows, fixed in UTC, open and close %s %s on this clock",
		ShiftDate(s, loc, from, to), s.At.In(loc).Format("15:04"), s.Before, s.After, shortDuration(move), direction)
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

// ZoneNote describes loc over [from, to) for a report's header: "Europe/Paris,
// CET (UTC+01:00) until 29 March 03:00, then CEST (UTC+02:00)". A zone that
// is UTC gives "UTC".
func ZoneNote(loc *time.Location, from, to time.Time) string {
	if loc == nil || loc == time.UTC {
		return "UTC"
	}
	var b strings.Builder
	b.WriteString(loc.String() + ", " + stateAt(loc, from).String())
	for _, s := range Shifts(loc, from, to) {
		fmt.Fprintf(&b, " until %s %s, then %s", ShiftDate(s, loc, from, to), s.At.In(loc).Format("15:04"), s.After)
	}
	return b.String()
}

// InZone writes an instant for people: "2030-01-07 17:00 UTC", followed by
// the local reading when loc is not UTC: "2030-01-07 17:00 UTC (18:00 CET)",
// with the local date when it differs.
func InZone(t time.Time, loc *time.Location) string {
	utc := t.UTC()
	s := utc.Format("2006-01-02 15:04 UTC")
	if loc == nil || loc == time.UTC {
		return s
	}
	local := t.In(loc)
	if local.Format("2006-01-02") != utc.Format("2006-01-02") {
		return s + " (" + local.Format("2006-01-02 15:04 MST") + ")"
	}
	return s + " (" + local.Format("15:04 MST") + ")"
}

// EdgeClocks lists the distinct UTC times of day at which the budget's
// windows open and close within (from, to), in order of first appearance:
// what LocalClock is asked about. Always-active and blocked budgets have
// none.
func (c *Compiled) EdgeClocks(from, to time.Time) (opens, closes []time.Duration) {
	seen := map[time.Duration]bool{}
	add := func(list []time.Duration, t time.Time) []time.Duration {
		if !t.After(from) || !t.Before(to) {
			return list
		}
		d := t.UTC().Sub(t.UTC().Truncate(24 * time.Hour))
		if seen[d] {
			return list
		}
		seen[d] = true
		return append(list, d)
	}
	for _, w := range c.Windows(from, to) {
		opens = add(opens, w.From)
	}
	seen = map[time.Duration]bool{}
	for _, w := range c.Windows(from, to) {
		closes = add(closes, w.To)
	}
	return opens, closes
}

// LocalEdges says, for a scheduled budget and a display zone, when its
// windows open and close on the local clock over [from, to), calling out
// every shift: "opens 09:00 UTC is 10:00 CET until 29 March, then 11:00
// CEST; closes 17:00 UTC is 18:00 CET until 29 March, then 19:00 CEST".
// It is "" for UTC, and for budgets without a window edge in the range.
func (c *Compiled) LocalEdges(loc *time.Location, from, to time.Time) string {
	if loc == nil || loc == time.UTC {
		return ""
	}
	opens, closes := c.EdgeClocks(from, to)
	var parts []string
	say := func(verb string, clocks []time.Duration) {
		const most = 3 // an hourly schedule would list 24
		for i, d := range clocks {
			if i == most {
				parts = append(parts, fmt.Sprintf("%s at %d more times", verb, len(clocks)-most))
				return
			}
			parts = append(parts, verb+" "+LocalClock(int(d/time.Hour), int(d%time.Hour/time.Minute), loc, from, to))
		}
	}
	say("opens", opens)
	say("closes", closes)
	return strings.Join(parts, "; ")
}
