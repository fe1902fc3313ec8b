package report

import (
	"path/filepath"
	"testing"
	"time"

	goldenfile "github.com/karpgate/karpgate/test/golden"

	"github.com/karpgate/karpgate/internal/manifest"
)

// fixtureReport reads the fixtures with a fixed clock: the week starting
// Monday 2025-01-06 00:00 UTC, "now" on the Wednesday afternoon.
func fixtureReport(t *testing.T, loc *time.Location) *Report {
	t.Helper()
	return fixtureReportFrom(t, loc, time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC), "testdata/pools.yaml", "testdata/edge-cases.yaml")
}

// fixtureReportFrom explains the files over the week from from.
func fixtureReportFrom(t *testing.T, loc *time.Location, from time.Time, files ...string) *Report {
	t.Helper()
	objects, err := manifest.ReadAll(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(objects, Options{
		Nodes: 12, Disrupting: 1, From: from, To: from.Add(7 * 24 * time.Hour),
		Now:      time.Date(2025, 1, 8, 14, 30, 0, 0, time.UTC),
		At:       []time.Time{time.Date(2025, 1, 6, 10, 0, 0, 0, time.UTC), time.Date(2025, 1, 6, 18, 0, 0, 0, time.UTC)},
		Location: loc,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/<name>.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", name), got)
}

func TestBuild(t *testing.T) {
	r := fixtureReport(t, nil)
	var names []string
	for _, p := range r.Pools {
		names = append(names, p.Name)
	}
	want := []string{"business-hours", "drift-overnight", "weekend-typo", "legacy-default", "surprises", "rejected", "unreadable"}
	if len(names) != len(want) {
		t.Fatalf("pools = %v, want %v (the EC2NodeClass is not a NodePool)", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("pools = %v, want %v", names, want)
		}
	}
	if !r.Invalid() {
		t.Error("Invalid() = false with a blocked, a rejected and an unreadable NodePool")
	}
	if r.Pools[1].BlockedThroughout() != "" || r.Pools[2].BlockedThroughout() == "" {
		t.Error("only weekend-typo is blocked throughout")
	}
	if r.Pools[3].Note == "" {
		t.Error("the v1beta1 NodePool carries no note")
	}
	if got := r.Pools[6].ReadError; got == nil {
		t.Error("nodes: 5 (a number) should be a read error")
	}
	clean := &Report{Pools: r.Pools[:2]}
	if clean.Invalid() {
		t.Error("Invalid() = true for valid NodePools")
	}
}
