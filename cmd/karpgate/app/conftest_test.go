package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/lint/output"
)

// conftestExamples is conftest's examples/ folder in the Go module cache,
// at the release hack/conftest pins: its policies are read where they are,
// never copied.
func conftestExamples(t *testing.T) string {
	t.Helper()
	dir, err := crdsource.PinnedModuleDir(context.Background(), "conftest", "github.com/open-policy-agent/conftest")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "examples")
}

// TestConftestExamplesLoadUnchanged runs conftest's own examples through
// karpgate lint, with the outcomes conftest's acceptance tests
// (acceptance.bats in the same module) expect of conftest test. The one
// difference is deliberate: warnings with --fail-on-warn exit 2, as every
// karpgate lint run does, where conftest exits 1.
func TestConftestExamplesLoadUnchanged(t *testing.T) {
	ex := conftestExamples(t)
	const karpenterV0 = "../../../policies/testdata/conftest/karpenter-v0"
	k8s := filepath.Join(ex, "kubernetes")
	service, err := os.ReadFile(filepath.Join(k8s, "service.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		stdin     string
		want      int
		wantOut   []string
		unwantOut []string
	}{
		{"a service only warns", []string{"-p", k8s + "/policy", k8s + "/service.yaml"}, "", 0,
			[]string{"warn  main.warn  Service/hello-kubernetes", "Found service hello-kubernetes but services are not allowed"}, nil},
		{"a deployment with root containers fails", []string{"-p", k8s + "/policy", k8s + "/deployment.yaml"}, "", 1,
			[]string{
				"deny  main.deny  Deployment/hello-kubernetes", "Containers must not run as root in Deployment hello-kubernetes",
				"Deployment hello-kubernetes must provide app/release labels for pod selectors",
				"hello-kubernetes must include Kubernetes recommended labels",
				"deny  main.violation  Deployment/hello-kubernetes", "Found deployment hello-kubernetes but deployments are not allowed",
				"4 denials, 0 warnings", "conftest policies also checked 1 other object",
			}, nil},
		{"warnings fail with --fail-on-warn", []string{"--fail-on-warn", "-p", k8s + "/policy", k8s + "/service.yaml"}, "", 2, nil, nil},
		{"a namespace with no policies passes", []string{"--namespace", "notpresent", "-p", k8s + "/policy", k8s + "/deployment.yaml"}, "", 0,
			[]string{"no findings", "1 other object skipped"}, nil},
		{"a namespace glob", []string{"--namespace", "ma*", "-p", k8s + "/policy", k8s + "/deployment.yaml"}, "", 1, []string{"4 denials"}, nil},
		{"every namespace", []string{"--all-namespaces", "-p", k8s + "/policy", k8s + "/deployment.yaml"}, "", 1, []string{"4 denials"}, nil},
		{"standard input", []string{"-p", k8s + "/policy", "-"}, string(service), 0, []string{"Found service hello-kubernetes"}, nil},
		{"several files", []string{"-p", k8s + "/policy", k8s + "/service.yaml", k8s + "/deployment+service.yaml"}, "", 1,
			[]string{"4 denials, 2 warnings", "conftest policies also checked 3 other objects"}, nil},
		{"an exception waives a rule for one document", []string{"-p", ex + "/exceptions/policy", ex + "/exceptions/deployments.yaml"}, "", 1,
			[]string{
				"deny  main.deny_run_as_root  Deployment/cannot-run-as-root",
				"waived  main.deny_run_as_root  Deployment/can-run-as-root",
				`reason: data.main.exception names "run_as_root"`,
				"1 denial, 0 warnings, 1 waived",
			}, []string{"deny  main.deny_run_as_root  Deployment/can-run-as-root"}},
		{"a Rego v0 policy for NodePools", []string{"-p", karpenterV0, karpenterV0 + "/nodepools.yaml"}, "", 1,
			[]string{
				"deny  main.deny  NodePool/unlimited", "NodePool unlimited has no spec.limits",
				"warn  main.warn_expire  NodePool/never-expires", "NodePool never-expires never expires its nodes",
				"waived  main.deny  NodePool/approved-unlimited",
			}, []string{"deny  main.deny  NodePool/approved-unlimited"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"lint", now}, tt.args...)
			for i, a := range args {
				if a == "-p" {
					args[i] = "--policy"
				}
			}
			code, stdout, stderr := run(t, tt.stdin, args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
			for _, unwanted := range tt.unwantOut {
				if strings.Contains(stdout, unwanted) {
					t.Errorf("output has %q:\n%s", unwanted, stdout)
				}
			}
		})
	}
}

// TestConftestFindingsInEveryFormat checks that every output format names
// a conftest finding's package and rule and carries its message, active
// and waived.
func TestConftestFindingsInEveryFormat(t *testing.T) {
	ex := conftestExamples(t)
	for _, format := range output.Names() {
		t.Run(format, func(t *testing.T) {
			code, stdout, stderr := run(t, "", "lint", now, "--format", format, "--policy", ex+"/exceptions/policy", ex+"/exceptions/deployments.yaml")
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, stderr)
			}
			for _, want := range []string{"main.deny_run_as_root", "Containers must not run as root in Deployment cannot-run-as-root"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("%s output lacks %q:\n%s", format, want, stdout)
				}
			}
		})
	}
}

// TestConftestRulesAreListed: --list-rules shows conftest rules beside
// karpgate's, by namespace and name.
func TestConftestRulesAreListed(t *testing.T) {
	ex := conftestExamples(t)
	code, stdout, stderr := run(t, "", "lint", "--list-rules", "--policy", ex+"/kubernetes/policy")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"KG101", "main.deny", "main.violation", "main.warn"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--list-rules lacks %s:\n%s", want, stdout)
		}
	}
}

// TestConftestTestsRunInVerify: the Rego tests beside conftest's example
// policies pass under karpgate verify, as `conftest verify` passes them
// (acceptance.bats: "4 tests, 4 passed").
func TestConftestTestsRunInVerify(t *testing.T) {
	ex := conftestExamples(t)
	code, stdout, stderr := run(t, "", "verify", "-v", "--policy", ex+"/kubernetes/policy")
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout, "PASS main.test_"); n != 4 {
		t.Errorf("%d of conftest's 4 example tests passed:\n%s", n, stdout)
	}
}
