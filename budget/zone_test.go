package budget

import (
	"testing"
	"time"
	// The DST tables must not depend on the machine's zoneinfo.
	_ "time/tzdata"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// The DST tables of 2026, from the tz database: Europe/Paris moves on the
// last Sundays of March and October at 01:00 UTC; America/New_York on the
// second Sunday of March at 07:00 UTC and the first Sunday of November at
// 06:00 UTC. Australia/Sydney is the southern case: summer time spans the
// new year.
func TestShiftsDSTTables(t *testing.T) {
	year2026 := [2]time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	hour := time.Hour
	tests := []struct {
		zone string
		want []Shift
	}{
		{"Europe/Paris", []Shift{
			{At: time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), Before: ZoneState{"CET", hour}, After: ZoneState{"CEST", 2 * hour}},
			{At: time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC), Before: ZoneState{"CEST", 2 * hour}, After: ZoneState{"CET", hour}},
		}},
		{"America/New_York", []Shift{
			{At: time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), Before: ZoneState{"EST", -5 * hour}, After: ZoneState{"EDT", -4 * hour}},
			{At: time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC), Before: ZoneState{"EDT", -4 * hour}, After: ZoneState{"EST", -5 * hour}},
		}},
		{"Australia/Sydney", []Shift{
			{At: time.Date(2026, 4, 4, 16, 0, 0, 0, time.UTC), Before: ZoneState{"AEDT", 11 * hour}, After: ZoneState{"AEST", 10 * hour}},
			{At: time.Date(2026, 10, 3, 16, 0, 0, 0, time.UTC), Before: ZoneState{"AEST", 10 * hour}, After: ZoneState{"AEDT", 11 * hour}},
		}},
		{"Asia/Tokyo", nil},
		{"UTC", nil},
	}
	for _, tt := range tests {
		t.Run(tt.zone, func(t *testing.T) {
			got := Shifts(mustZone(t, tt.zone), year2026[0], year2026[1])
			if len(got) != len(tt.want) {
				t.Fatalf("Shifts = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if !got[i].At.Equal(tt.want[i].At) || got[i].Before != tt.want[i].Before || got[i].After != tt.want[i].After {
					t.Errorf("shift %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestShiftsAreHalfOpenAtTheRangeEdges(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	shift := time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)
	if got := Shifts(paris, shift, shift.Add(Week)); len(got) != 0 {
		t.Errorf("a range starting at the shift lists it: %+v", got)
	}
	if got := Shifts(paris, shift.Add(-Week), shift); len(got) != 0 {
		t.Errorf("a range ending at the shift lists it: %+v", got)
	}
	if got := Shifts(paris, shift.Add(-time.Second), shift.Add(time.Second)); len(got) != 1 {
		t.Errorf("a range around the shift misses it: %+v", got)
	}
}

func TestLocalClockCallsOutEveryShift(t *testing.T) {
	paris, newYork := mustZone(t, "Europe/Paris"), mustZone(t, "America/New_York")
	march := [2]time.Time{time.Date(2026, 3, 23, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC)}
	// Local dates of this range stay in 2026 in both zones, so no year is said.
	year := [2]time.Time{time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC)}
	winter := [2]time.Time{time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC)}
	newYear := [2]time.Time{time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)}
	tests := []struct {
		name         string
		hour, minute int
		loc          *time.Location
		span         [2]time.Time
		want         string
	}{
		{"the issue's example", 9, 0, paris, march, "09:00 UTC is 10:00 CET until 29 March, then 11:00 CEST"},
		{"no shift in a winter week", 9, 0, paris, winter, "09:00 UTC is 10:00 CET"},
		{"both shifts of a year", 17, 0, paris, year, "17:00 UTC is 18:00 CET until 29 March, then 19:00 CEST until 25 October, then 18:00 CET"},
		{"past midnight", 23, 30, paris, march, "23:30 UTC is 00:30 CET the next day until 29 March, then 01:30 CEST the next day"},
		{"west of UTC, the day before", 2, 0, newYork, year, "02:00 UTC is 21:00 EST the day before until 8 March, then 22:00 EDT the day before until 1 November, then 21:00 EST the day before"},
		{"across the new year, with years", 9, 0, newYork, newYear, "09:00 UTC is 05:00 EDT until 1 November 2026, then 04:00 EST until 14 March 2027, then 05:00 EDT"},
		{"UTC display", 9, 0, time.UTC, march, "09:00 UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LocalClock(tt.hour, tt.minute, tt.loc, tt.span[0], tt.span[1]); got != tt.want {
				t.Errorf("LocalClock = %q\n           want %q", got, tt.want)
			}
		})
	}
}

func TestZoneNoteAndInZone(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	from := time.Date(2026, 3, 23, 0, 0, 0, 0, time.UTC)
	if got, want := ZoneNote(paris, from, from.Add(Week)), "Europe/Paris, CET (UTC+01:00) until 29 March 03:00, then CEST (UTC+02:00)"; got != want {
		t.Errorf("ZoneNote = %q, want %q", got, want)
	}
	if got := ZoneNote(time.UTC, from, from.Add(Week)); got != "UTC" {
		t.Errorf("ZoneNote(UTC) = %q", got)
	}
	at := time.Date(2026, 3, 30, 23, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		loc  *time.Location
		want string
	}{
		{time.UTC, "2026-03-30 23:30 UTC"},
		{paris, "2026-03-30 23:30 UTC (2026-03-31 01:30 CEST)"},
		{mustZone(t, "America/New_York"), "2026-03-30 23:30 UTC (19:30 EDT)"},
	} {
		if got := InZone(at, tt.loc); got != tt.want {
			t.Errorf("InZone(%s) = %q, want %q", tt.loc, got, tt.want)
		}
	}
	if got := UTCOffset(-(3*time.Hour + 30*time.Minute)); got != "UTC-03:30" {
		t.Errorf("UTCOffset = %q", got)
	}
}

func TestLocalEdgesOfAScheduledBudget(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	from := time.Date(2026, 3, 23, 0, 0, 0, 0, time.UTC)
	c := Compile(scheduled(0, "0", "0 9 * * mon-fri", "8h", "Drifted"))
	want := "opens 09:00 UTC is 10:00 CET until 29 March, then 11:00 CEST; closes 17:00 UTC is 18:00 CET until 29 March, then 19:00 CEST"
	if got := c.LocalEdges(paris, from, from.Add(Week)); got != want {
		t.Errorf("LocalEdges = %q\n            want %q", got, want)
	}
	if got := Compile(Budget{Index: 1, Nodes: "10%"}).LocalEdges(paris, from, from.Add(Week)); got != "" {
		t.Errorf("an always-active budget has edges: %q", got)
	}
	hourly := Compile(scheduled(2, "1", "@hourly", "10m"))
	if got := hourly.LocalEdges(paris, from, from.Add(Week)); got == "" || len(got) > 600 {
		t.Errorf("an hourly budget's edges are not summarised: %q", got)
	}
}

func TestNextAllowedSkipsWindowsThatStillAllowNothing(t *testing.T) {
	set := CompileSet([]Budget{
		scheduled(0, "0", "0 9 * * mon-fri", "8h", "Drifted"),
		{Index: 1, Nodes: "1", Reasons: []string{"Drifted"}},
		{Index: 2, Nodes: "0", Reasons: []string{"Empty"}},
	})
	monday10 := instant(t, "2026-01-05T10:00:00Z")
	got, err := set.NextAllowed(Disrupted(10, 0), monday10, DefaultHorizon)
	if err != nil {
		t.Fatal(err)
	}
	if want := instant(t, "2026-01-05T17:00:00Z"); !got[Drifted].Equal(want) {
		t.Errorf("Drifted next allowed at %s, want %s", got[Drifted], want)
	}
	if !got[Underutilized].Equal(monday10) {
		t.Errorf("Underutilized is unlimited now, next allowed at %s", got[Underutilized])
	}
	if !got[Empty].IsZero() {
		t.Errorf("Empty never allows one, next allowed at %s", got[Empty])
	}
	// One node already disrupting uses budgets[1]'s one: still nothing.
	got, _ = set.NextAllowed(Disrupted(10, 1), monday10, DefaultHorizon)
	if !got[Drifted].IsZero() {
		t.Errorf("with the only allowance in use, Drifted next allowed at %s", got[Drifted])
	}
}
