package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// TestHoldIsAdmittedWhenKG301Denies (issue #30): a cluster that denies
// KG301 (drift is never allowed) at admission still admits karpgate's own
// freeze, a GitOps apply of the held NodePool and the hand-made hold of
// docs/disruption.md, whose blocks marked `<!-- e2e: ... -->` run here as
// written; a hand-written hold without a record is refused.
func TestHoldIsAdmittedWhenKG301Denies(t *testing.T) {
	env, _ := testenv.StartKarpgate(t, localcluster.Options{
		Config: "apiVersion: karpgate.io/v1alpha1\nkind: Config\nrules:\n  KG301:\n    actions: {admission: deny}\n",
	})
	env.MustKubectl(nil, "apply", "-f", "../testdata/audit/cluster.yaml")
	const git = "../testdata/audit/nodepool-git.yaml"
	ssa := []string{"apply", "--server-side", "--field-manager=argocd-controller", "--force-conflicts", "-f", git}
	env.MustKubectl(nil, ssa...)
	const (
		free = `[{"nodes":"10%"}]`
		held = `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`
	)
	check := func(what, want, wantHolder string) {
		t.Helper()
		if budgets, holder := holdOf(t, env, "web-git"); budgets != want || holder != wantHolder {
			t.Fatalf("after %s: budgets %s held by %q, want %s held by %q", what, budgets, holder, want, wantHolder)
		}
	}

	if code, out := karpgateRun(t, env, "freeze", "web-git", "--reason", "incident 42"); code != 0 {
		t.Fatalf("freeze with KG301 denying: exit %d\n%s", code, out)
	}
	check("the freeze", held, "freeze")
	if res := env.Kubectl(nil, ssa...); res.ExitCode != 0 || strings.Contains(res.Stderr, "KG301") {
		t.Fatalf("a GitOps apply of the frozen NodePool: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	check("a GitOps apply", held, "freeze")
	if code, out := karpgateRun(t, env, "resume", "web-git"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	check("resume", free, "")

	// The same budget without a record is the user's, and KG301 refuses it.
	res := env.Kubectl(nil, "patch", "nodepool", "web-git", "--type=json", "-p", `[{"op":"add","path":"/spec/disruption/budgets/-","value":`+zeroDrift+`}]`)
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "KG301 spec.disruption.budgets[1]") {
		t.Fatalf("a hold without a record: exit %d, want a KG301 denial\n%s", res.ExitCode, res.Stderr)
	}
	check("the refused hold", free, "")

	blocks := docBlocks(t, "disruption.md")
	runBlock(t, env, blocks, "hold-by-hand")
	check("docs/disruption.md hold-by-hand", held, "freeze")
	if code, out := karpgateRun(t, env, "status"); code != 0 || !strings.Contains(out, "web-git: drift is frozen since") {
		t.Errorf("status after the hand-made hold: exit %d\n%s", code, out)
	}
	afterLastResume(t, env)
	runBlock(t, env, blocks, "release-by-hand")
	check("docs/disruption.md release-by-hand", free, "")

	runBlock(t, env, blocks, "hold-by-hand")
	check("the hand-made hold again", held, "freeze")
	afterLastResume(t, env)
	if code, out := karpgateRun(t, env, "resume", "web-git"); code != 0 || !strings.Contains(out, "removed karpgate's budget spec.disruption.budgets[1] (a freeze)") {
		t.Fatalf("resume of the hand-made hold: exit %d\n%s", code, out)
	}
	check("resume of the hand-made hold", free, "")

	// A stale record: the budget it names is not there.
	env.MustKubectl(nil, "annotate", "nodepool", "web-git", `karpgate.io/rollout-guard={"budget":`+zeroDrift+`,"index":1,"since":"2026-01-05T08:00:00Z","reason":"stale"}`)
	afterLastResume(t, env)
	runBlock(t, env, blocks, "stale-record")
	budgets, annotations := budgetsOf(t, env.Client, "web-git")
	if _, ok := annotations["karpgate.io/rollout-guard"]; ok || budgets != free || annotations["karpgate.io/rollout-guard-resumed"] == "" {
		t.Errorf("after stale-record: budgets %s, annotations %v", budgets, annotations)
	}
	for name := range blocks {
		if !blocks[name].ran {
			t.Errorf("docs/disruption.md block %s is marked for e2e but no test runs it", name)
		}
	}
}

// afterLastResume waits until the clock has left the second of the last
// resume: a resume is a new value of karpgate.io/rollout-guard-resumed
// (RFC 3339, whole seconds), and one in the same second as the last
// changes nothing, so the mutating webhook would keep the hold.
func afterLastResume(t *testing.T, env *testenv.Env) {
	t.Helper()
	_, annotations := budgetsOf(t, env.Client, "web-git")
	last, err := time.Parse(time.RFC3339, annotations["karpgate.io/rollout-guard-resumed"])
	if err != nil {
		return // never resumed
	}
	wait.ForNoError(t, "the clock past the last resume", func() error {
		if now := time.Now().UTC().Truncate(time.Second); !now.After(last) {
			return fmt.Errorf("now %s, last resume %s", now.Format(time.RFC3339), last.Format(time.RFC3339))
		}
		return nil
	})
}

type docBlock struct {
	script string
	ran    bool
}

// docBlocks reads the shell blocks of docs/<name> marked `<!-- e2e: NAME -->`.
func docBlocks(t *testing.T, name string) map[string]*docBlock {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]*docBlock{}
	for _, m := range guideBlock.FindAllStringSubmatch(string(doc), -1) {
		blocks[m[1]] = &docBlock{script: m[2]}
	}
	return blocks
}

// runBlock runs one block with bash as a user would, kubectl on PATH and
// the test API server as the cluster.
func runBlock(t *testing.T, env *testenv.Env, blocks map[string]*docBlock, name string) {
	t.Helper()
	b, ok := blocks[name]
	if !ok {
		t.Fatalf("no block marked <!-- e2e: %s -->", name)
	}
	b.ran = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.script)
	cmd.Env = append(os.Environ(), "PATH="+env.AssetsDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+env.KubeconfigPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("block %s failed: %v\n%s\nstdout:\n%s\nstderr:\n%s", name, err, b.script, stdout.String(), stderr.String())
	}
}
