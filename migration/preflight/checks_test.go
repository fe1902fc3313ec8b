package preflight

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in, want, err string
		drops         bool
	}{
		{in: "v1.1.0", want: "v1.1.0", drops: true},
		{in: "1.1", want: "v1.1.0", drops: true},
		{in: " 1.15.1 ", want: "v1.15.1", drops: true},
		{in: "v1.0.8", want: "v1.0.8"},
		{in: "v2.0.0-rc.1", want: "v2.0.0-rc.1", drops: true},
		{in: "v0.37.0", err: "preflight checks upgrades to Karpenter v1.0.0 and later"},
		{in: "latest", err: `--to "latest": not a Karpenter version; write it like v1.1.0`},
		{in: "", err: "not a Karpenter version"},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseTarget(%q) error = %v, want %q", tt.in, err, tt.err)
			}
		case err != nil:
			t.Errorf("ParseTarget(%q): %v", tt.in, err)
		case got.String() != tt.want || got.DropsV1Beta1() != tt.drops:
			t.Errorf("ParseTarget(%q) = %s (drops v1beta1 %v), want %s (%v)", tt.in, got, got.DropsV1Beta1(), tt.want, tt.drops)
		}
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		findings   []Finding
		failOnWarn bool
		want       int
	}{
		{nil, true, ExitReady},
		{[]Finding{{Severity: Info}}, true, ExitReady},
		{[]Finding{{Severity: Warn}}, false, ExitReady},
		{[]Finding{{Severity: Warn}}, true, ExitWarn},
		{[]Finding{{Severity: Warn}, {Severity: Deny}}, true, ExitDeny},
	}
	for i, tt := range tests {
		r := &Report{Findings: tt.findings}
		r.finish()
		if got := r.ExitCode(tt.failOnWarn); got != tt.want {
			t.Errorf("case %d: exit %d, want %d", i, got, tt.want)
		}
	}
}

// A cluster ready for v1.1 has no finding but the upgrade itself (PF111):
// nothing to fix, nothing converted by karpgate to explain.
func TestMigratedClusterIsReady(t *testing.T) {
	r := runDetected(t, asCluster(readFixture(t, "migrated")), "v1.1.0")
	for _, f := range r.Findings {
		if f.ID != "PF111" || f.Severity != Info {
			t.Errorf("finding on a migrated cluster: %+v", f)
		}
	}
	if !r.Summary.Ready || len(r.Find("PF111")) != 1 {
		t.Errorf("a migrated cluster: %+v", r)
	}
}

// The package doc lists every check with its ID and name, in order.
func TestDocListsEveryCheck(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile(`(?m)^//\t(PF\d+) (\S+)`).FindAllStringSubmatch(string(doc), -1)
	if len(listed) != len(checks) {
		t.Fatalf("doc.go lists %d checks, there are %d", len(listed), len(checks))
	}
	for i, c := range checks {
		if listed[i][1] != c.id || listed[i][2] != c.name {
			t.Errorf("doc.go line %d names %s %s, want %s %s", i, listed[i][1], listed[i][2], c.id, c.name)
		}
	}
}

func TestDropEntriesCommand(t *testing.T) {
	kind := nodePoolKind
	got := dropEntriesCommand(kind, "a", "karpenter.sh/v1beta1", []int{0, 2}, 3)
	want := `kubectl patch nodepools.v1.karpenter.sh a --type=json -p '[` +
		`{"op":"test","path":"/metadata/managedFields/2/apiVersion","value":"karpenter.sh/v1beta1"},{"op":"remove","path":"/metadata/managedFields/2"},` +
		`{"op":"test","path":"/metadata/managedFields/0/apiVersion","value":"karpenter.sh/v1beta1"},{"op":"remove","path":"/metadata/managedFields/0"}]'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Every entry v1beta1: an empty list would be ignored, so it resets.
	got = dropEntriesCommand(kind, "a", "karpenter.sh/v1beta1", []int{0}, 1)
	if !strings.Contains(got, `{"op":"replace","path":"/metadata/managedFields","value":[{}]}`) || strings.Contains(got, `"remove"`) {
		t.Errorf("all entries stale: %s", got)
	}
}
