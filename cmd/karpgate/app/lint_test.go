package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

const now = "--now=2024-06-05T12:00:00Z"

func TestLintExitCodes(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		stdin   string
		want    int
		wantErr string
	}{
		{"clean", []string{"testdata/clean.yaml"}, "", 0, ""},
		{"clean, fail on warn", []string{"--fail-on-warn", "testdata/clean.yaml"}, "", 0, ""},
		{"warnings only", []string{"testdata/warn.yaml"}, "", 0, ""},
		{"warnings, fail on warn", []string{"--fail-on-warn", "testdata/warn.yaml"}, "", 2, ""},
		{"deny", []string{"testdata/deny.yaml", "testdata/clean.yaml"}, "", 1, ""},
		{"deny and warnings, fail on warn", []string{"--fail-on-warn", "testdata/deny.yaml", "testdata/warn.yaml"}, "", 1, ""},
		{"warning raised to deny by config", []string{"--config", "testdata/strict.yaml", "testdata/warn.yaml"}, "", 1, ""},
		{"production turns @latest into deny", []string{"--environment", "production", "testdata/warn.yaml"}, "", 1, ""},
		{"stdin", []string{"-"}, "kind: ConfigMap\napiVersion: v1\n", 0, ""},
		{"parse error", []string{"testdata/broken.yaml"}, "", 3, "testdata/broken.yaml:1"},
		{"missing input", []string{"testdata/nope.yaml"}, "", 3, "testdata/nope.yaml"},
		{"no input", nil, "", 3, "no input"},
		{"unknown format", []string{"--format", "yaml", "testdata/clean.yaml"}, "", 3, `unknown format "yaml"`},
		{"two formats on stdout", []string{"--format", "text", "--format", "json", "testdata/clean.yaml"}, "", 3, "both write to standard output"},
		{"config typo", []string{"--config", "testdata/bad-config.yaml", "testdata/clean.yaml"}, "", 3, `testdata/bad-config.yaml:3:5: rules[KG102].severty: unknown key "severty"`},
		{"forbidden builtin", []string{"--policy", "../../../policies/testdata/userpolicy/httpsend", "testdata/clean.yaml"}, "", 3, "http.send is not available in karpgate policies"},
		{"bad --now", []string{"--now", "tomorrow", "testdata/clean.yaml"}, "", 3, "--now"},
		{"bad --color", []string{"--color", "sometimes", "testdata/clean.yaml"}, "", 3, "--color"},
		{"unknown flag", []string{"--frmat", "json"}, "", 3, "unknown flag"},
		{"refused by the API server", []string{"testdata/refused.yaml"}, "", 1, ""},
		{"--schema=false leaves policy only", []string{"--schema=false", "testdata/refused.yaml"}, "", 0, ""},
		{"--crds replaces the linked CRDs", []string{"--crds", "testdata/crds/small-nodepool-crd.yaml", "testdata/refused.yaml"}, "", 0, ""},
		{"--crds folder", []string{"--crds", "testdata/crds/small-nodepool-crd.yaml", "--crds", "testdata/clean.yaml", "testdata/refused.yaml"}, "", 0, ""},
		{"--crds without CRDs", []string{"--crds", "testdata/clean.yaml", "testdata/refused.yaml"}, "", 3, "no CustomResourceDefinition found"},
		{"--crds Helm template", []string{"--crds", "testdata/crds", "testdata/refused.yaml"}, "", 3, "looks like a Helm template: render it first"},
		{"--crds and --crds-from-cluster", []string{"--crds", "testdata/crds/small-nodepool-crd.yaml", "--crds-from-cluster", "testdata/refused.yaml"}, "", 3, "give one"},
		{"--schema=false with --crds", []string{"--schema=false", "--crds", "testdata/crds/small-nodepool-crd.yaml", "testdata/refused.yaml"}, "", 3, "--schema=false turns off"},
		{"--crds-from-cluster without a cluster", []string{"--crds-from-cluster", "--kubeconfig", "testdata/nope-kubeconfig", "testdata/refused.yaml"}, "", 3, "kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, tt.stdin, append([]string{"lint", now}, tt.args...)...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tt.want, stderr)
			}
			if tt.wantErr != "" && !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("stderr %q does not mention %q", stderr, tt.wantErr)
			}
		})
	}
}

// --show-defaults prints what the API server would store on standard output,
// defaults marked, and moves the report to standard error.
func TestLintShowDefaults(t *testing.T) {
	code, stdout, stderr := run(t, "", "lint", now, "--show-defaults", "testdata/deny.yaml", "testdata/clean.yaml")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "lint-show-defaults.golden", stdout)
	if !strings.Contains(stderr, "KG201") || strings.Contains(stdout, "KG201") {
		t.Errorf("the report belongs on standard error:\nstdout %s\nstderr %s", stdout, stderr)
	}
	for _, want := range []string{"expireAfter: 720h # default", "consolidationPolicy: WhenEmptyOrUnderutilized # default", "metadataOptions: # default"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stored objects lack %q", want)
		}
	}
}

// --karpenter-version judges by that release's CRDs too, as far as the
// release's facts state them: Balanced, new in v1.14, is refused for v1.12
// although the linked CRDs accept it, and accepted for v1.14.
func TestLintKarpenterVersionJudgesItsCRDFacts(t *testing.T) {
	const pool = "testdata/docs/balanced.yaml"
	code, stdout, stderr := run(t, "", "lint", now, "--karpenter-version", "v1.12", pool)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	golden(t, "lint-karpenter-version.golden", stdout)
	if code, stdout, stderr := run(t, "", "lint", now, "--karpenter-version", "v1.14", pool); code != 0 {
		t.Fatalf("v1.14: exit %d, want 0:\n%s%s", code, stdout, stderr)
	}
}

func TestLintSeveralFormatsInOnePass(t *testing.T) {
	dir := t.TempDir()
	sarif, js := filepath.Join(dir, "out.sarif"), filepath.Join(dir, "out.json")
	code, stdout, stderr := run(t, "", "lint", now, "--format", "sarif="+sarif, "--format", "json="+js, "--format", "text", "testdata/deny.yaml", "testdata/warn.yaml")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "lint-text.golden", stdout)
	var sarifLog struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	data, err := os.ReadFile(sarif)
	if err != nil || json.Unmarshal(data, &sarifLog) != nil || sarifLog.Version != "2.1.0" || len(sarifLog.Runs[0].Results) != 3 {
		t.Fatalf("sarif file: %v %s", err, data)
	}
	var report struct {
		Summary struct{ Deny, Warn int } `json:"summary"`
	}
	data, err = os.ReadFile(js)
	if err != nil || json.Unmarshal(data, &report) != nil || report.Summary.Deny != 1 || report.Summary.Warn != 2 {
		t.Fatalf("json file: %v %s", err, data)
	}
}

func TestLintHelpDocumentsExitCodes(t *testing.T) {
	code, stdout, _ := run(t, "", "lint", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Exit codes:", "0  no deny findings", "1  at least one deny finding", "2  warnings but no deny findings, with --fail-on-warn", "3  usage error", "--format sarif=karpgate.sarif"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestLintListRules(t *testing.T) {
	code, stdout, _ := run(t, "", "lint", "--list-rules", "--policy", "../../../policies/testdata/userpolicy/good")
	if code != 0 || !strings.Contains(stdout, "KG201    deny  NodePool") || !strings.Contains(stdout, "ACME100  deny  EC2NodeClass") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
}

func TestVerify(t *testing.T) {
	const failing = "../../../policies/testdata/userpolicy/failing"
	tests := []struct {
		name   string
		args   []string
		want   int
		golden string
	}{
		{"builtin rules pass", []string{"verify"}, 0, ""},
		{"failing suite text", []string{"verify", "--policy", failing, "--run", "acme"}, 1, "verify-failing.txt.golden"},
		{"failing suite json", []string{"verify", "--policy", failing, "--run", "acme", "--format", "json"}, 1, "verify-failing.json.golden"},
		{"failing suite junit", []string{"verify", "--policy", failing, "--run", "acme", "--format", "junit"}, 1, "verify-failing.xml.golden"},
		{"passing user suite", []string{"verify", "-v", "--policy", "../../../policies/testdata/userpolicy/good", "--data", "../../../policies/testdata/userdata", "--run", "acme"}, 0, "verify-passing.txt.golden"},
		{"does not compile", []string{"verify", "--policy", "../../../policies/testdata/userpolicy/netlookup"}, 3, ""},
		{"bad format", []string{"verify", "--format", "tap"}, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.want, stdout, stderr)
			}
			if tt.golden != "" {
				golden(t, tt.golden, stdout)
			}
		})
	}
}
