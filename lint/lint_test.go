package lint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	goldenfile "github.com/karpgate/karpgate/test/golden"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/policies"
)

// fixedNow pins budget analysis: Wednesday 5 June 2024, noon UTC.
var fixedNow = time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC)

// linked is the CRD set the binary links, compiled once for the whole test
// binary as `karpgate lint` does once per run.
var linked = sync.OnceValues(crdschema.Linked)

func linkedCRDs(t testing.TB) *crdschema.Set {
	t.Helper()
	set, err := linked()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func engineFor(t testing.TB, cfg *config.Config) *policies.Engine {
	t.Helper()
	e, err := policies.New(context.Background(), policies.Options{Config: cfg, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// describe renders a report's findings one per line, for expected files.
func describe(r *Report) string {
	var b strings.Builder
	for _, f := range r.Findings() {
		fmt.Fprintf(&b, "%s:%d:%d %s %s %s %s: %s\n", filepath.Base(f.File), f.Line, f.Column, f.Action, f.RuleID, f.Object.Ref(), f.Path, f.Message)
	}
	for _, f := range r.WaivedFindings() {
		fmt.Fprintf(&b, "%s:%d:%d waived %s %s %s: %s (reason: %s)\n", filepath.Base(f.File), f.Line, f.Column, f.RuleID, f.Object.Ref(), f.Path, f.Message, f.WaiverReason)
	}
	return b.String()
}

func checkExpected(t *testing.T, path, got string) {
	t.Helper()
	if goldenfile.Update() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./lint -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("findings differ from %s\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestRuleFixtures lints, for every rule in the catalog, a failing and a
// passing manifest under policies/testdata/rules/<ID>/ (with that folder's
// karpgate.yaml, if any) and checks the complete findings against the
// .findings file beside it. Independently of those files, the failing
// manifest must trigger the rule and the passing one must not.
func TestRuleFixtures(t *testing.T) {
	const root = "../policies/testdata/rules"
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range catalog {
		t.Run(rule.ID, func(t *testing.T) {
			if !rule.RunsAt(config.CI) {
				t.Skipf("%s runs only at %v; webhook/admission tests it", rule.ID, rule.Points)
			}
			dir := filepath.Join(root, rule.ID)
			cfg := config.Default()
			if _, err := os.Stat(filepath.Join(dir, "karpgate.yaml")); err == nil {
				if cfg, err = config.Load(filepath.Join(dir, "karpgate.yaml")); err != nil {
					t.Fatal(err)
				}
			}
			engine := engineFor(t, cfg)
			for _, name := range []string{"fail", "pass"} {
				report, err := Run(context.Background(), Options{Inputs: []string{filepath.Join(dir, name+".yaml"), filepath.Join(root, "common.yaml")}, Engine: engine, CRDs: linkedCRDs(t)})
				if err != nil {
					t.Fatal(err)
				}
				fired := false
				for _, f := range append(report.Findings(), report.WaivedFindings()...) {
					if f.RuleID == rule.ID {
						fired = true
						if f.Line == 0 || f.Path == "" && rule.ID != "KG401" {
							t.Errorf("%s: finding without position or path: %+v", name, f)
						}
					}
					if strings.HasSuffix(f.File, "common.yaml") {
						t.Errorf("common.yaml must stay clean, got %s %s", f.RuleID, f.Message)
					}
				}
				if fired != (name == "fail") {
					t.Errorf("%s.yaml: rule %s fired=%v, want %v\n%s", name, rule.ID, fired, name == "fail", describe(report))
				}
				checkExpected(t, filepath.Join(dir, name+".findings"), describe(report))
			}
		})
	}
}

// TestDocsWorkedExamples lints the budget and AMI examples from Karpenter's
// documentation (testdata/docs) with the clock pinned.
func TestDocsWorkedExamples(t *testing.T) {
	report, err := Run(context.Background(), Options{Inputs: []string{"testdata/docs"}, Engine: engineFor(t, config.Default().WithEnvironment("production")), CRDs: linkedCRDs(t)})
	if err != nil {
		t.Fatal(err)
	}
	got := describe(report)
	for _, want := range []string{
		// sat-sun is a wrap-around range robfig/cron rejects: every voluntary disruption is blocked.
		`weekend.yaml:14:9 deny KG201 NodePool/weekend-freeze spec.disruption.budgets[0].schedule: "0 9 * * sat-sun" is not a valid cron: beginning of range (6) beyond end of range (0)`,
		// A nodes "0" window over weekday nights leaves Drifted unlimited by day and over the weekend.
		`evenings.yaml:14:9 warn KG302 NodePool/no-drift-after-hours spec.disruption.budgets[0]: Drifted disruptions are unlimited whenever no budget covering them is active, every week: Tue–Fri 09:00–17:00 and Sat 09:00–Mon 17:00 (UTC)`,
		// Business-hours freeze for Drifted and Underutilized: unlimited outside it.
		`business-hours.yaml:15:9 warn KG302 NodePool/business-hours spec.disruption.budgets[0]: Underutilized and Drifted disruptions are unlimited whenever no budget covering them is active, every week: Mon–Thu 17:00–09:00 next day and Fri 17:00–Mon 09:00 (UTC)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing finding:\n%s\ngot:\n%s", want, got)
		}
	}
	checkExpected(t, "testdata/docs.findings", got)
	for _, f := range report.Findings() {
		if strings.HasSuffix(f.File, "pinned-aliases.yaml") {
			t.Errorf("pinned aliases al2023@v20240807 and bottlerocket@v1.20.3 must pass in production, got %s", f.RuleID)
		}
	}
}

func TestRunCountsAndSkips(t *testing.T) {
	input := `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
---
apiVersion: v1
kind: List
items:
  - apiVersion: karpenter.k8s.aws/v1
    kind: EC2NodeClass
    metadata: {name: default}
    spec:
      amiSelectorTerms:
        - alias: al2023@latest
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: d}
`
	report, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader(input), Engine: engineFor(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	s := report.Summary()
	want := Summary{Files: 1, Documents: 3, Objects: 1, Skipped: 2, Warn: 1}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	f := report.Findings()[0]
	if f.RuleID != "KG102" || f.File != "-" || f.Line != 14 || f.Column != 11 || f.Path != "spec.amiSelectorTerms[0].alias" {
		t.Fatalf("finding not located in the List item: %+v", f)
	}
}

func TestRunStopsAtParseErrors(t *testing.T) {
	_, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: strings.NewReader("a: [\n"), Engine: engineFor(t, nil)})
	if err == nil || !strings.Contains(err.Error(), "<stdin>:1") {
		t.Fatalf("got %v", err)
	}
}

func TestExitCode(t *testing.T) {
	finding := func(a config.Action) Finding { return Finding{Finding: policies.Finding{Action: a}} }
	report := func(fs ...Finding) *Report { return &Report{Objects: []ObjectResult{{Findings: fs}}} }
	waivedDeny := &Report{Objects: []ObjectResult{{Waived: []Finding{finding(config.Deny)}}}}
	tests := []struct {
		name       string
		r          *Report
		failOnWarn bool
		want       int
	}{
		{"clean", report(), false, ExitClean},
		{"clean, fail on warn", report(), true, ExitClean},
		{"warn", report(finding(config.Warn)), false, ExitClean},
		{"warn, fail on warn", report(finding(config.Warn)), true, ExitWarn},
		{"deny", report(finding(config.Deny)), false, ExitDeny},
		{"deny and warn, fail on warn", report(finding(config.Warn), finding(config.Deny)), true, ExitDeny},
		{"waived deny", waivedDeny, true, ExitClean},
	}
	for _, tt := range tests {
		if got := tt.r.ExitCode(tt.failOnWarn); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestDescribeIsStable(t *testing.T) {
	// Two runs over the same input must render identically although objects
	// are evaluated concurrently.
	run := func() string {
		r, err := Run(context.Background(), Options{Inputs: []string{"../policies/testdata/rules"}, Engine: engineFor(t, nil), CRDs: linkedCRDs(t), Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		return describe(r)
	}
	if a, b := run(), run(); !bytes.Equal([]byte(a), []byte(b)) {
		t.Fatal("output depends on evaluation order")
	}
}

// The example configuration must name only rules that exist.
func TestExampleConfigNamesKnownRules(t *testing.T) {
	cfg, err := config.Load("../config/karpgate.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	engineFor(t, cfg)
}

// TestDocumentsInMemoryAreLintedLikeFiles: what `karpgate audit` hands lint
// (objects read from a cluster, each named as kubectl names it) gives the
// findings the same bytes in a file give, under the document's name.
func TestDocumentsInMemoryAreLintedLikeFiles(t *testing.T) {
	engine := engineFor(t, config.Default())
	file := "../policies/testdata/rules/KG201/fail.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := Run(context.Background(), Options{Inputs: []string{file}, Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	fromMemory, err := Run(context.Background(), Options{Documents: []Document{{Name: "nodepool.karpenter.sh/weekend", Data: data}}, Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromMemory.Findings()) == 0 || fromMemory.Sources[0] != "nodepool.karpenter.sh/weekend" || fromMemory.Findings()[0].File != "nodepool.karpenter.sh/weekend" {
		t.Fatalf("in memory: sources %v, findings %v", fromMemory.Sources, fromMemory.Findings())
	}
	if got, want := strings.ReplaceAll(describe(fromMemory), "weekend:", "fail.yaml:"), describe(fromFile); got != want {
		t.Errorf("in memory:\n%s\nfrom the file:\n%s", got, want)
	}
	if _, err := Run(context.Background(), Options{Documents: []Document{{Name: "a", Data: data}, {Name: "a", Data: data}}, Engine: engine}); err == nil {
		t.Error("two documents of one name were accepted")
	}
}
