package output

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/karpgate/karpgate/test/golden"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/lint"
	"github.com/karpgate/karpgate/policies"
)

// report lints testdata/input with the clock pinned and Karpenter's CRDs: a
// production class with @latest (deny) and a waived finding (with an
// expiry and its author) whose problem the CRD's own rule still refuses
// (deny), an invalid budget schedule (deny), a window read as an allowance
// (KG302, made audit here: only json and sarif show it) and a missing class
// (a warning), a name with characters formats must escape (which the API
// server refuses: deny), a skipped ConfigMap and a clean file.
func report(t *testing.T) *lint.Report {
	t.Helper()
	now := time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC)
	cfg, err := config.Parse("karpgate.yaml", []byte("rules:\n  KG302: {severity: audit}\n"))
	if err != nil {
		t.Fatal(err)
	}
	engine, err := policies.New(context.Background(), policies.Options{Config: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crdschema.Linked()
	if err != nil {
		t.Fatal(err)
	}
	r, err := lint.Run(context.Background(), lint.Options{Inputs: []string{"testdata/input"}, Engine: engine, CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/<name>.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", "golden", name), got)
}

func TestGoldenOutputs(t *testing.T) {
	r := report(t)
	tests := []struct {
		format, golden string
		color, audit   bool
	}{
		{"text", "report.txt", false, false},
		{"text", "report-color.txt", true, false},
		{"text", "report-audit.txt", false, true},
		{"json", "report.json", false, false},
		{"junit", "report.xml", false, false},
		{"sarif", "report.sarif", false, false},
		{"github", "report.github.txt", false, false},
		{"tap", "report.tap", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			write, err := Lookup(tt.format)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := write(&b, r, Options{Color: tt.color, Audit: tt.audit, ToolVersion: "v0.0.0-test"}); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, b.Bytes())
			if hasANSI := strings.Contains(b.String(), "\x1b["); hasANSI != tt.color {
				t.Errorf("ANSI escapes present=%v, want %v", hasANSI, tt.color)
			}
		})
	}
}

func TestSARIFCarriesRuleMetadataAndSuppressions(t *testing.T) {
	r := report(t)
	var b bytes.Buffer
	if err := SARIF(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF 2.1.0 log: %+v", log)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(r.Rules) {
		t.Fatalf("want every rule of the catalog, got %d of %d", len(run.Tool.Driver.Rules), len(r.Rules))
	}
	s := r.Summary()
	if s.Audit == 0 || len(run.Results) != s.Deny+s.Warn+s.Audit+s.Waived {
		t.Fatalf("results: got %d, want %d, with audit findings among them", len(run.Results), s.Deny+s.Warn+s.Audit+s.Waived)
	}
	suppressed, notes := 0, 0
	for _, res := range run.Results {
		if res.Level == "note" {
			notes++
		}
		rule := run.Tool.Driver.Rules[res.RuleIndex]
		if rule.ID != res.RuleID {
			t.Errorf("ruleIndex %d points at %s, not %s", res.RuleIndex, rule.ID, res.RuleID)
		}
		if rule.ShortDescription.Text == "" || rule.DefaultConfiguration.Level == "" {
			t.Errorf("rule %s lacks metadata", rule.ID)
		}
		if l := res.Locations[0].PhysicalLocation.Region; l.StartLine < 1 || l.StartColumn < 1 {
			t.Errorf("%s: region %+v", res.RuleID, l)
		}
		if len(res.Suppressions) > 0 {
			suppressed++
			if res.Suppressions[0].Justification == "" {
				t.Errorf("suppression without justification")
			}
		}
	}
	if suppressed != s.Waived {
		t.Errorf("suppressed %d, waived %d", suppressed, s.Waived)
	}
	if notes != s.Audit {
		t.Errorf("%d results at level note, want the %d audit findings", notes, s.Audit)
	}
}

func TestJUnitCounts(t *testing.T) {
	r := report(t)
	var b bytes.Buffer
	if err := JUnit(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	denied := 0
	for _, o := range r.Objects {
		for _, f := range o.Findings {
			if f.Action == "deny" {
				denied++
				break
			}
		}
	}
	if doc.Tests != len(r.Objects) || doc.Failures != denied || len(doc.Suites) != 3 {
		t.Fatalf("got %d tests, %d failures, %d suites; want %d, %d, 3", doc.Tests, doc.Failures, len(doc.Suites), len(r.Objects), denied)
	}
}

func TestGitHubEscaping(t *testing.T) {
	if got := escapeProperty("a,b:c%\nd"); got != "a%2Cb%3Ac%25%0Ad" {
		t.Fatalf("property: %q", got)
	}
	if got := escapeData("50%\r\nx:y,z"); got != "50%25%0D%0Ax:y,z" {
		t.Fatalf("data: %q", got)
	}
}

func TestTAPPlanMatchesTestPoints(t *testing.T) {
	r := report(t)
	var b bytes.Buffer
	if err := TAP(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	points := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "not ok ") {
			points++
		}
	}
	if lines[0] != "TAP version 13" || lines[1] != "1..4" || points != 4 {
		t.Fatalf("plan %q with %d points", lines[1], points)
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets([]string{"sarif=out.sarif", "text", "json=-"})
	if err == nil {
		t.Fatalf("two formats on stdout must be refused, got %+v", got)
	}
	got, err = ParseTargets([]string{"sarif=out.sarif", "text"})
	if err != nil || len(got) != 2 || got[0] != (Target{"sarif", "out.sarif"}) || got[1] != (Target{"text", ""}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := ParseTargets([]string{"yaml"}); err == nil || !strings.Contains(err.Error(), "use one of github, json, junit, sarif, tap, text") {
		t.Fatalf("got %v", err)
	}
	if got, _ := ParseTargets(nil); len(got) != 1 || got[0].Format != "text" {
		t.Fatalf("default: %+v", got)
	}
}
