package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/internal/manifest"

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

// TestWriteTextUnhealthyLane: Karpenter v1.15 paces node repair with the
// Unhealthy reason, whose budget NotReady nodes do not use up; v1.14's API
// server refuses the reason, and its report has three lanes.
func TestWriteTextUnhealthyLane(t *testing.T) {
	from := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		golden, karpenter string
		want, wantNot     []string
	}{
		{"report-repair.txt", "v1.15", []string{
			"12 nodes, 0 disrupting, 2 not Ready (Karpenter v1.15)",
			"  Unhealthy\n",
			"Mon 06 Jan 00:00 → 01:00             1          budgets[0]: nodes \"1\"\n",
			"budgets[0]: 25% of 12 nodes = 3, minus 2 disrupting",
			"whole range                          3          budgets[0]: 25% of 12 nodes = 3\n",
		}, nil},
		{"report-repair-v1.14.txt", "v1.14", []string{
			`"Unhealthy" is not a disruption reason; the reasons are Underutilized, Empty and Drifted (case matters) [rejected by the API server]`,
		}, []string{"  Unhealthy\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			objects, err := manifest.ReadAll([]string{"testdata/repair.yaml"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			reasons, err := budget.ReasonsOf(tt.karpenter)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Build(objects, Options{Nodes: 12, NotReady: 2, Karpenter: tt.karpenter, Reasons: reasons,
				From: from, To: from.Add(2 * 24 * time.Hour), At: []time.Time{from.Add(2 * time.Hour)}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := WriteText(&out, r); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the report does not say %q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("the report says %q", w)
				}
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}
