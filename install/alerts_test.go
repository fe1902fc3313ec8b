package install

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/golden"
	"github.com/karpgate/karpgate/test/toolbin"
)

func promtool(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolbin.Find(t, "KARPGATE_PROMTOOL", "promtool"), args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestAlertsWithPromtool checks the rules with `promtool check rules` and runs
// the unit tests under testdata/promtool with `promtool test rules`. Each
// expected alert gets its alert's static runbook annotations here, so the
// test files only spell out what templates expand.
func TestAlertsWithPromtool(t *testing.T) {
	dir := t.TempDir()
	alerts := Alerts(Defaults().Monitoring.PrometheusRule.Alerts.Thresholds())
	rules, err := json.MarshalIndent(map[string]any{"groups": RuleGroups(Defaults().Monitoring.PrometheusRule.Alerts.Thresholds())}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := promtool(t, dir, "check", "rules", "--lint=all", "--lint-fatal", "rules.yaml"); err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, rules)
	}

	byName := map[string]Alert{}
	for _, a := range alerts {
		byName[a.Name] = a
	}
	tested := map[string]bool{}
	files := golden.Glob(t, filepath.Join("testdata", "promtool", "*.yaml"))
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			for _, group := range list(doc["tests"]) {
				for _, test := range list(group.(map[string]any)["alert_rule_test"]) {
					name, _ := test.(map[string]any)["alertname"].(string)
					a, ok := byName[name]
					if !ok {
						t.Fatalf("%s tests alert %q, which karpgate does not have", file, name)
					}
					for _, exp := range list(test.(map[string]any)["exp_alerts"]) {
						annotations, _ := exp.(map[string]any)["exp_annotations"].(map[string]any)
						if annotations == nil {
							t.Fatalf("%s: an expected %s alert has no exp_annotations", file, name)
						}
						annotations["runbook"], annotations["runbook_url"] = a.Runbook, RunbookURL(a.Name)
						tested[name] = true
					}
				}
			}
			filled, err := yaml.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(file)
			if err := os.WriteFile(filepath.Join(dir, name), filled, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := promtool(t, dir, "test", "rules", name); err != nil {
				t.Fatalf("promtool test rules %s: %v\n%s", file, err, out)
			}
		})
	}
	for _, a := range alerts {
		if !tested[a.Name] {
			t.Errorf("alert %s never fires in a promtool test under testdata/promtool", a.Name)
		}
	}
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestAlertThresholdsReachTheRules: each option changes the expressions that
// use it, and only those.
func TestAlertThresholdsReachTheRules(t *testing.T) {
	base := Defaults().Monitoring.PrometheusRule.Alerts
	tests := []struct {
		name   string
		change func(*AlertOptions)
		alert  string
		want   string
	}{
		{"drift stuck for", func(a *AlertOptions) { a.DriftStuckFor = "45m" }, "KarpgateDriftRolloutStuck", RecordDrifted + "[45m]"},
		{"blocked for", func(a *AlertOptions) { a.BlockedFor = "3d" }, "KarpgateNodePoolDisruptionBlocked", RecordBlocked + " offset 3d"},
		{"frozen for", func(a *AlertOptions) { a.FrozenFor = "3h" }, "KarpgateDriftFrozen", "offset 3h"},
		{"denials a minute", func(a *AlertOptions) { a.DenialsPerMinute = 0.25 }, "KarpgateAdmissionDenialsHigh", "* 60 > 0.25"},
		{"error ratio", func(a *AlertOptions) { a.ErrorRatio = 0.01 }, "KarpgateConversionFailing", "> 0.01"},
		{"certificate days", func(a *AlertOptions) { a.CertificateExpiryDays = 30 }, "KarpgateServingCertificateExpiresSoon", "/ 86400 < 30"},
	}
	defaults := Alerts(base.Thresholds())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := base
			tt.change(&changed)
			for i, a := range Alerts(changed.Thresholds()) {
				if a.Name == tt.alert && !strings.Contains(a.Expr, tt.want) {
					t.Errorf("%s: %q lacks %q", a.Name, a.Expr, tt.want)
				}
				if a.Name == tt.alert && a.Expr == defaults[i].Expr {
					t.Errorf("%s: the option did not change the expression", a.Name)
				}
			}
		})
	}
}

// TestAlertsHaveRunbooks: every alert says what to do, and its runbook_url
// points at a section of docs/runbooks.md headed by its name that says what
// it means, how to check and how to fix; the page has no section for an
// alert that does not exist.
func TestAlertsHaveRunbooks(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	const repoBlob = "https://github.com/karpgate/karpgate/blob/main/"
	page, found := strings.CutPrefix(RunbooksURL, repoBlob)
	if !found {
		t.Fatalf("RunbooksURL %s is not a file of the repository's main branch", RunbooksURL)
	}
	doc, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	sections := runbookSections(string(doc))
	alertName := regexp.MustCompile(`^Karpgate[A-Za-z0-9]+$`)
	var names []string
	for _, a := range Alerts(Defaults().Monitoring.PrometheusRule.Alerts.Thresholds()) {
		if a.Runbook == "" || a.Summary == "" || a.Description == "" || !slices.Contains([]string{"warning", "critical"}, a.Severity) {
			t.Errorf("%s: summary, description, runbook and a severity of warning or critical are required: %+v", a.Name, a)
		}
		if slices.Contains(names, a.Name) {
			t.Errorf("alert %s is defined twice", a.Name)
		}
		names = append(names, a.Name)
		// GitHub's anchor for a heading of letters and digits is the
		// heading in lower case.
		if !alertName.MatchString(a.Name) {
			t.Errorf("alert %s: a name of letters and digits after Karpgate keeps its runbook anchor simple", a.Name)
		}
		if want := RunbooksURL + "#" + strings.ToLower(a.Name); RunbookURL(a.Name) != want {
			t.Errorf("%s: runbook_url %s, want %s", a.Name, RunbookURL(a.Name), want)
		}
		section, ok := sections[a.Name]
		if !ok {
			t.Errorf("%s has no section \"## %s\"", page, a.Name)
			continue
		}
		for _, part := range []string{"**What it means.**", "**How to check.**", "**How to fix.**"} {
			if !strings.Contains(section, part) {
				t.Errorf("%s, section %s: no %s", page, a.Name, part)
			}
		}
	}
	for name := range sections {
		if !slices.Contains(names, name) {
			t.Errorf("%s has a section %s, but karpgate has no such alert", page, name)
		}
	}
}

// runbookSections maps each level-two heading of the runbooks page to the
// text under it, up to the next level-two heading.
func runbookSections(doc string) map[string]string {
	sections := map[string]string{}
	for _, part := range strings.Split(doc, "\n## ")[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		sections[strings.TrimSpace(heading)] = body
	}
	return sections
}

func TestMonitoringOptionsAreChecked(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*MonitoringOptions)
		wantErr string
	}{
		{"interval", func(m *MonitoringOptions) { m.ServiceMonitor.Interval = "30 seconds" }, `monitoring.serviceMonitor.interval "30 seconds": want a Prometheus duration`},
		{"empty duration", func(m *MonitoringOptions) { m.PrometheusRule.Alerts.DriftStuckFor = "" }, `monitoring.prometheusRule.alerts.driftStuckFor ""`},
		{"zero duration", func(m *MonitoringOptions) { m.PrometheusRule.Alerts.BlockedFor = "0s" }, `monitoring.prometheusRule.alerts.blockedFor "0s"`},
		{"frozen in days and hours", func(m *MonitoringOptions) { m.PrometheusRule.Alerts.FrozenFor = "1d 12h" }, `monitoring.prometheusRule.alerts.frozenFor "1d 12h"`},
		{"ratio as a percentage", func(m *MonitoringOptions) { m.PrometheusRule.Alerts.ErrorRatio = 5 }, "errorRatio 5: want a share between 0 and 1"},
		{"no denials", func(m *MonitoringOptions) { m.PrometheusRule.Alerts.DenialsPerMinute = 0 }, "denialsPerMinute 0"},
		{"no days", func(m *MonitoringOptions) { m.PrometheusRule.Alerts.CertificateExpiryDays = 0 }, "certificateExpiryDays 0"},
		{"half a service account", func(m *MonitoringOptions) { m.PrometheusServiceAccount.Name = "prometheus" }, "set both name and namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Defaults()
			tt.change(&opts.Monitoring)
			if _, err := BuildMonitoring(opts); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("BuildMonitoring: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
