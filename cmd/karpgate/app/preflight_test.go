package app

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreflightFiles(t *testing.T) {
	code, stdout, stderr := execute(t, nil, "preflight", "--to", "v1.1.0", "--from-files", "testdata/preflight/git.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (deny findings)\nstderr: %s", code, stderr)
	}
	golden(t, filepath.Join("preflight", "git.txt.golden"), stdout)

	code, stdout, _ = execute(t, nil, "preflight", "--to", "1.1", "--from-files", "testdata/preflight/git.yaml", "-o", "json")
	var report struct {
		Findings []struct{ ID, Severity string }
		Summary  struct{ Deny int }
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil || code != 1 {
		t.Fatalf("exit %d, JSON: %v\n%s", code, err, stdout)
	}
	var ids []string
	for _, f := range report.Findings {
		ids = append(ids, f.ID+"/"+f.Severity)
	}
	if got := strings.Join(ids, " "); got != "PF102/deny PF107/deny PF111/info" {
		t.Errorf("findings %s", got)
	}

	// Standard input, and a clean folder.
	code, stdout, _ = execute(t, []byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\n"), "preflight", "--to", "v1.1.0", "--from-files", "-")
	if code != 0 || !strings.Contains(stdout, "0 deny, 0 warn, 1 info: ready for Karpenter v1.1.0") || !strings.Contains(stdout, "PF111  upgrade-path: the release running is unknown") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestPreflightAnyUpgrade checks an upgrade between two v1 releases from
// files: the release running is read from Karpenter's Deployment (its
// chart's version label), or --from, and the findings come from the two
// releases' facts.
func TestPreflightAnyUpgrade(t *testing.T) {
	code, stdout, stderr := execute(t, nil, "preflight", "--to", "v1.15.1", "--from-files", "testdata/preflight/v1.8.yaml")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (no deny finding)\nstderr: %s\n%s", code, stderr, stdout)
	}
	golden(t, filepath.Join("preflight", "v1.8.txt.golden"), stdout)

	code, stdout, _ = execute(t, nil, "preflight", "--to", "v1.15.1", "--from", "v1.0.8", "--from-files", "testdata/preflight/v1.8.yaml", "-o", "json")
	var report struct {
		From     struct{ Version, Source string }
		Findings []struct{ ID, Severity, Title string }
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil || code != 0 {
		t.Fatalf("exit %d, JSON: %v\n%s", code, err, stdout)
	}
	if report.From.Version != "v1.0.8" || report.From.Source != "--from" {
		t.Errorf("from %+v, want v1.0.8 from --from", report.From)
	}
	var hash string
	for _, f := range report.Findings {
		if f.ID == "PF113" {
			hash = f.Title
		}
	}
	if want := "EC2NodeClass hash version v3 -> v6"; !strings.Contains(hash, want) {
		t.Errorf("PF113 %q, want %q", hash, want)
	}

	// A downgrade is denied.
	code, stdout, _ = execute(t, nil, "preflight", "--to", "v1.5.0", "--from-files", "testdata/preflight/v1.8.yaml")
	if code != 1 || !strings.Contains(stdout, "deny  PF111  upgrade-path: Karpenter v1.8.2 runs, newer than v1.5.0: a downgrade") {
		t.Errorf("a downgrade: exit %d\n%s", code, stdout)
	}
	code, _, stderr = execute(t, nil, "preflight", "--to", "v1.15.1", "--from", "latest", "--from-files", "testdata/preflight/v1.8.yaml")
	if code != 3 || !strings.Contains(stderr, `--from "latest": not a Karpenter version`) {
		t.Errorf("--from latest: exit %d, %s", code, stderr)
	}
}

func TestPreflightUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"preflight"}, "--to is required"},
		{[]string{"preflight", "--to", "0.37.0"}, "preflight checks upgrades to Karpenter v1.0.0 and later"},
		{[]string{"preflight", "--to", "v1.1.0", "-o", "yaml"}, `--output "yaml": use text or json`},
		{[]string{"preflight", "--to", "v1.1.0", "--from-files", "x", "--fix-kubelet"}, "--fix-kubelet changes a cluster"},
		{[]string{"preflight", "--to", "v1.1.0", "--dry-run"}, "--dry-run goes with --fix-kubelet"},
		{[]string{"preflight", "--to", "v1.1.0", "--from-files", "testdata/preflight/missing.yaml"}, "missing.yaml"},
		{[]string{"preflight", "--to", "v1.1.0", "--kubeconfig", "testdata/preflight/missing-kubeconfig"}, "reading kubeconfig"},
		{[]string{"migrate-storage", "--kubeconfig", "testdata/preflight/missing-kubeconfig"}, "reading kubeconfig"},
		{[]string{"migrate-storage", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		code, _, stderr := execute(t, nil, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", tt.args, code, stderr, ExitUsage, tt.want)
		}
	}
}

func TestPreflightFailOnWarn(t *testing.T) {
	input := []byte(`apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: c, annotations: {karpenter.sh/stored-version-migrated: "true"}}
`)
	if code, _, _ := execute(t, input, "preflight", "--to", "v1.1.0", "--from-files", "-"); code != 0 {
		t.Errorf("warnings alone: exit %d, want 0", code)
	}
	if code, _, _ := execute(t, input, "preflight", "--to", "v1.1.0", "--from-files", "-", "--fail-on-warn"); code != 2 {
		t.Errorf("warnings with --fail-on-warn: exit %d, want 2", code)
	}
}
