package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	// The DST goldens must not depend on the machine's zoneinfo.
	_ "time/tzdata"
)

func TestWriteText(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	tests := []struct {
		golden string
		loc    *time.Location
	}{
		{"report.txt", time.UTC},
		{"report-paris.txt", paris},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteText(&out, fixtureReport(t, tt.loc)); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}

// TestWriteTextCallsOutDaylightSavingShifts: the weeks of the spring shift
// in Paris (30 March 2025) and New York (9 March 2025). Karpenter's windows
// stay at 09:00 and 17:00 UTC; the local clock moves, and the report says so
// in the header, on each scheduled budget and in the stretch lists.
func TestWriteTextCallsOutDaylightSavingShifts(t *testing.T) {
	tests := []struct {
		golden, zone string
		from         time.Time
		want         []string
	}{
		{"report-paris-dst.txt", "Europe/Paris", time.Date(2025, 3, 24, 0, 0, 0, 0, time.UTC), []string{
			"clocks change on 30 March at 03:00, CET (UTC+01:00) to CEST (UTC+02:00): windows, fixed in UTC, open and close 1h later on this clock",
			"local time: opens 09:00 UTC is 10:00 CET until 30 March, then 11:00 CEST; closes 17:00 UTC is 18:00 CET until 30 March, then 19:00 CEST",
			"~ clocks change Sun 30 Mar 03:00 within the stretch above: CEST, UTC+02:00",
		}},
		{"report-newyork-dst.txt", "America/New_York", time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC), []string{
			"clocks change on 9 March at 03:00, EST (UTC-05:00) to EDT (UTC-04:00)",
			"local time: opens 09:00 UTC is 04:00 EST until 9 March, then 05:00 EDT",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			loc, err := time.LoadLocation(tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := WriteText(&out, fixtureReportFrom(t, loc, tt.from, "testdata/pools.yaml")); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the report does not say %q", w)
				}
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}
