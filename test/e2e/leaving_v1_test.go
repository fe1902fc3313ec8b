package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/testenv"
)

// preflightReport is the part of `karpgate preflight -o json` the test reads.
type preflightReport struct {
	Findings []struct {
		ID, Severity, Title string
		Objects             []struct{ Kind, Name, Note string }
		Fix                 struct{ Commands []string }
	}
	Summary struct {
		Deny, Warn int
		Ready      bool
	}
}

// TestLeavingKarpenterV1 walks the steps of docs/upgrading-karpenter.md on a
// real API server made to look upgraded from v0.37 (objects written while
// the CRDs stored v1beta1, then v1 made the storage version, karpgate
// converting), reading etcd itself: preflight finds each planted problem;
// migrate-storage fails on the leftover v0.37 webhook and leaves
// storedVersions alone; after the printed fix it resumes and every object is
// stored as v1 with no field changed; --fix-kubelet moves the kubelet blocks
// (splitting the EC2NodeClass NodePools disagree on) and prints the drift;
// the printed commands fix the rest; and preflight then passes.
func TestLeavingKarpenterV1(t *testing.T) {
	env := startWithKarpgateConversion(t)
	karpgate := buildKarpgate(t)
	shell := userShell(t, env, karpgate)

	for _, kind := range karpenter.Kinds {
		env.SetStorageVersion(kind, karpenter.V1Beta1)
	}
	env.MustKubectl(nil, "apply", "-f", "../testdata/migration/v0.37.yaml")
	for _, kind := range karpenter.Kinds {
		env.SetStorageVersion(kind, karpenter.V1)
	}
	env.MustKubectl(nil, "apply", "-f", "../testdata/migration/leftover-webhooks.yaml")
	names := listNames(t, env)
	expectStored(t, env, names, karpenter.V1Beta1)
	expectStoredVersions(t, env, []string{karpenter.V1Beta1, karpenter.V1})
	before := v1Views(t, env, names)

	run := func(wantCode int, args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(karpgate, append(args, "--kubeconfig", env.KubeconfigPath)...)
		cmd.Dir = t.TempDir()
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != wantCode {
			t.Fatalf("karpgate %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	preflight := func(wantCode int) preflightReport {
		t.Helper()
		stdout, _ := run(wantCode, "preflight", "--to", "v1.1.0", "-o", "json")
		var r preflightReport
		decodeJSON(t, stdout, &r)
		return r
	}
	state := filepath.Join(t.TempDir(), "migrate-storage.json")

	t.Run("preflight finds each planted problem", func(t *testing.T) {
		stdout, _ := run(1, "preflight", "--to", "v1.1.0")
		golden(t, []byte(hideAddresses(stdout)), "migration", "preflight-before.txt.golden")
		r := preflight(1)
		expectFindings(t, r, map[string]string{
			"PF101": "v1beta1 is still a stored version of 3 CRDs",
			"PF102": "3 NodePools of EC2NodeClass default keep their kubelet settings only in Karpenter's annotation",
			"PF103": "carries compatibility.karpenter.sh/v1beta1-kubelet-conversion",
			"PF104": "EC2NodeClass ubuntu was an Ubuntu EC2NodeClass without amiSelectorTerms",
			"PF105": "ValidatingWebhookConfiguration validation.webhook.karpenter.sh is left over from Karpenter v0.3x",
			"PF108": "still have managedFields written at karpenter.sh/v1beta1",
		})
	})

	t.Run("migrate-storage stops at the leftover webhook and keeps storedVersions", func(t *testing.T) {
		stdout, stderr := run(1, "migrate-storage", "--state", state, "--page-size", "2")
		golden(t, []byte(stdout), "migration", "migrate-storage-failed.txt.golden")
		if !strings.Contains(stdout, `failed calling webhook "validation.webhook.karpenter.sh"`) || !strings.Contains(stdout, "status.storedVersions left alone: 4 objects could not be rewritten") {
			t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
		expectStoredVersions(t, env, []string{karpenter.V1Beta1, karpenter.V1})
		expectStoredKind(t, env, karpenter.KindNodePool, names[karpenter.KindNodePool], karpenter.V1Beta1)
		expectStoredKind(t, env, karpenter.KindNodeClaim, names[karpenter.KindNodeClaim], karpenter.V1)
		expectStoredKind(t, env, karpenter.KindEC2NodeClass, names[karpenter.KindEC2NodeClass], karpenter.V1)
	})

	t.Run("after the printed fix it resumes and finishes", func(t *testing.T) {
		shell.runFixes(preflight(1), "PF105")
		stdout, stderr := run(0, "migrate-storage", "--state", state, "--page-size", "2")
		golden(t, []byte(stdout), "migration", "migrate-storage-resumed.txt.golden")
		for _, want := range []string{"resuming from", "nodeclaims.karpenter.sh: skipped, rewritten by an earlier run", "nodepools.karpenter.sh: 4 rewritten"} {
			if !strings.Contains(stdout+stderr, want) {
				t.Errorf("output lacks %q:\n%s\n%s", want, stdout, stderr)
			}
		}
		expectStoredVersions(t, env, []string{karpenter.V1})
		expectStored(t, env, names, karpenter.V1)
		after := v1Views(t, env, names)
		for key, obj := range before {
			if !equalJSON(obj, after[key]) {
				t.Errorf("migrate-storage changed %s:\nbefore %v\nafter  %v", key, obj, after[key])
			}
		}
		if _, err := os.Stat(state); !os.IsNotExist(err) {
			t.Errorf("progress file left: %v", err)
		}
	})

	t.Run("fix-kubelet moves the blocks and prints the drift", func(t *testing.T) {
		_, stderr := run(1, "preflight", "--to", "v1.1.0", "--fix-kubelet", "--dry-run")
		if !strings.Contains(stderr, "(dry run) EC2NodeClass/default-c: created") {
			t.Errorf("dry run:\n%s", stderr)
		}
		if res := env.Kubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws", "default-c"); res.ExitCode == 0 {
			t.Fatal("the dry run created EC2NodeClass default-c")
		}
		_, stderr = run(1, "preflight", "--to", "v1.1.0", "--fix-kubelet")
		for _, want := range []string{
			`fix-kubelet: EC2NodeClass/default: spec.kubelet set to {"maxPods":110}, the block of NodePool a. Drift: none`,
			`fix-kubelet: EC2NodeClass/default-c: created as a copy of default with spec.kubelet {"maxPods":50,"systemReserved":{"cpu":"100m"}}, the block of NodePool c`,
			`fix-kubelet: NodePool/c: nodeClassRef.name default -> default-c, annotation compatibility.karpenter.sh/v1beta1-kubelet-conversion removed. Drift: every node of NodePool c (1 NodeClaim now) is replaced`,
			`fix-kubelet: NodePool/a: annotation compatibility.karpenter.sh/v1beta1-kubelet-conversion removed. Drift: none`,
			`fix-kubelet: 5 changes; 1 nodes will be replaced by drift`,
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks\n%s\ngot:\n%s", want, stderr)
			}
		}
		if got := env.MustKubectl(nil, "get", "ec2nodeclasses.v1.karpenter.k8s.aws", "default", "-o", "jsonpath={.spec.kubelet.maxPods}"); got != "110" {
			t.Errorf("EC2NodeClass default kubelet maxPods %q", got)
		}
		if got := env.MustKubectl(nil, "get", "nodepools.v1.karpenter.sh", "c", "-o", "jsonpath={.spec.template.spec.nodeClassRef.name}"); got != "default-c" {
			t.Errorf("NodePool c points at %q", got)
		}
	})

	t.Run("the printed commands fix the rest and preflight passes", func(t *testing.T) {
		// The one edit no command can make: name the Ubuntu AMIs.
		env.MustKubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws", "ubuntu", "--type=json",
			"-p", `[{"op":"replace","path":"/spec/amiSelectorTerms","value":[{"id":"ami-0123456789abcdef0"}]}]`)
		shell.runFixes(preflight(1), "PF104")
		// Warnings only from here on: preflight exits 0.
		shell.runFixes(preflight(0), "PF103")
		shell.runFixes(preflight(0), "PF108")
		r := preflight(0)
		// What stays is PF112, installing v1.1's CRDs: the first step of
		// the upgrade itself, which the cluster cannot take before it.
		var others []string
		for _, f := range r.Findings {
			if f.Severity == "warn" && f.ID != "PF112" {
				others = append(others, f.ID)
			}
		}
		if r.Summary.Deny != 0 || len(others) != 0 || !r.Summary.Ready {
			t.Errorf("preflight after the fixes: %d deny, warnings %v besides PF112, ready %v: %+v", r.Summary.Deny, others, r.Summary.Ready, r)
		}
		stdout, _ := run(0, "preflight", "--to", "v1.1.0")
		golden(t, []byte(hideAddresses(stdout)), "migration", "preflight-after.txt.golden")
	})
}

// userShell runs printed fix commands as a user would: bash with karpgate
// and the real kubectl on PATH and KUBECONFIG pointing at the cluster.
type fixShell struct {
	t   *testing.T
	env []string
}

func userShell(t *testing.T, env *testenv.Env, karpgate string) *fixShell {
	t.Helper()
	bin := t.TempDir()
	for name, target := range map[string]string{"kubectl": filepath.Join(env.AssetsDir, "kubectl"), "karpgate": karpgate} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return &fixShell{t: t, env: append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "KUBECONFIG="+env.KubeconfigPath)}
}

// runFixes runs every command the findings with id print, and fails when
// there are none: the test relies on them.
func (s *fixShell) runFixes(r preflightReport, id string) {
	s.t.Helper()
	ran := 0
	for _, f := range r.Findings {
		if f.ID != id {
			continue
		}
		for _, c := range f.Fix.Commands {
			cmd := exec.Command("bash", "-c", c)
			cmd.Env = s.env
			if out, err := cmd.CombinedOutput(); err != nil {
				s.t.Fatalf("%s fix %q: %v\n%s", id, c, err, out)
			}
			ran++
		}
	}
	if ran == 0 {
		s.t.Fatalf("no %s finding printed a command", id)
	}
}

func expectFindings(t *testing.T, r preflightReport, want map[string]string) {
	t.Helper()
	for id, title := range want {
		found := false
		for _, f := range r.Findings {
			found = found || f.ID == id && strings.Contains(f.Title, title)
		}
		if !found {
			t.Errorf("no %s finding titled like %q", id, title)
		}
	}
}

var addresses = regexp.MustCompile(`https://127\.0\.0\.1:\d+`)

// hideAddresses replaces the test's random loopback ports.
func hideAddresses(s string) string { return addresses.ReplaceAllString(s, "https://127.0.0.1:PORT") }

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
