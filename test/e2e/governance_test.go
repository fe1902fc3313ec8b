package e2e

import (
	"strings"
	"testing"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/test/testenv"
)

// TestWaiverGovernanceAtAdmission: with waivers.approvers set, a user it
// does not name cannot add a waiver (the API server says who writes, and
// karpgate refuses with KG006); an approver can, and karpgate records who;
// a waiver past its expiry no longer waives.
func TestWaiverGovernanceAtAdmission(t *testing.T) {
	env, _ := testenv.StartKarpgate(t, localcluster.Options{
		Config: "apiVersion: karpgate.io/v1alpha1\nkind: Config\nwaivers:\n  approvers:\n    groups: [platform]\n",
	})
	env.MustKubectl(nil, "apply", "-f", "../testdata/audit/cluster.yaml")
	// Both users may edit EC2NodeClasses as far as RBAC goes; only the
	// group says who may waive.
	as := func(user string, groups ...string) []string {
		args := []string{"--as", user, "--as-group", "system:masters"}
		for _, g := range groups {
			args = append(args, "--as-group", g)
		}
		return args
	}
	annotate := func(value string, who ...string) (int, string) {
		res := env.Kubectl(nil, append([]string{"annotate", "--overwrite", "ec2nodeclass", "staging-latest", "karpgate.io/waive-KG102=" + value}, who...)...)
		return res.ExitCode, res.Stderr
	}
	if code, stderr := annotate("dev account", as("mallory")...); code != 1 ||
		!strings.Contains(stderr, `KG006 metadata.annotations[karpgate.io/waive-KG102]: mallory may not add or change the waiver for KG102: karpgate.yaml names who may (waivers.approvers)`) {
		t.Fatalf("an unnamed user's waiver: exit %d\n%s", code, stderr)
	}
	if _, found := annotations(t, env, "staging-latest")["karpgate.io/waive-KG102"]; found {
		t.Fatal("the refused waiver was stored")
	}
	if code, stderr := annotate("dev account", as("alice", "platform")...); code != 0 ||
		!strings.Contains(stderr, "karpgate recorded alice as the author of the waiver of KG102") {
		t.Fatalf("an approver's waiver: exit %d\n%s", code, stderr)
	}
	if record := annotations(t, env, "staging-latest")["karpgate.io/waivers-set-by"]; !strings.Contains(record, `"KG102":{"user":"alice"`) {
		t.Errorf("the record says %q", record)
	}
	// Removing a waiver is allowed to anyone.
	if res := env.Kubectl(nil, append([]string{"annotate", "ec2nodeclass", "pinned", "team=web"}, as("mallory")...)...); res.ExitCode != 0 {
		t.Fatalf("an edit that adds no waiver: %s", res.Stderr)
	}

	// An expired waiver no longer waives: KG003 reports it, KG102 is back.
	if code, stderr := annotate("until 2020-01-31: dev account", as("alice", "platform")...); code != 0 ||
		!strings.Contains(stderr, "Warning: KG003 metadata.annotations[karpgate.io/waive-KG102]: waiver for KG102 expired at 2020-02-01T00:00:00Z, so KG102 applies again") ||
		!strings.Contains(stderr, "Warning: KG102 spec.amiSelectorTerms[0].alias") {
		t.Fatalf("an expired waiver: exit %d\n%s", code, stderr)
	}
	code, out := karpgateRun(t, env, "audit", "--format", "json")
	found := jsonFindings(t, out[strings.Index(out, "{"):])
	for _, want := range []string{
		"warn KG003 EC2NodeClass/staging-latest metadata.annotations[karpgate.io/waive-KG102]: waiver for KG102 expired at 2020-02-01T00:00:00Z, so KG102 applies again",
		"warn KG102 EC2NodeClass/staging-latest spec.amiSelectorTerms[0].alias",
	} {
		if code != 0 || !containsPrefix(found, want) {
			t.Errorf("karpgate audit: exit %d, lacks %q in\n  %s", code, want, strings.Join(found, "\n  "))
		}
	}
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func annotations(t *testing.T, env *testenv.Env, class string) map[string]string {
	t.Helper()
	var obj struct {
		Metadata struct{ Annotations map[string]string }
	}
	decodeJSON(t, env.MustKubectl(nil, "get", "ec2nodeclass", class, "-o", "json"), &obj)
	return obj.Metadata.Annotations
}

// TestFreezeSurvivesGitOpsApplies: while a freeze holds a NodePool, a
// GitOps controller applying the NodePool's Git version (server-side with
// its own field manager and forced conflicts, as Argo CD and Flux do;
// client-side apply; replace) leaves the hold in place, and a server-side
// diff sees no drift; resume ends the hold, and the next apply keeps it
// ended.
func TestFreezeSurvivesGitOpsApplies(t *testing.T) {
	env, _ := testenv.StartKarpgate(t, localcluster.Options{})
	env.MustKubectl(nil, "apply", "-f", "../testdata/audit/cluster.yaml")
	const git = "../testdata/audit/nodepool-git.yaml"
	ssa := []string{"apply", "--server-side", "--field-manager=argocd-controller", "--force-conflicts", "-f", git}
	env.MustKubectl(nil, ssa...)
	if code, out := karpgateRun(t, env, "freeze", "web-git", "--reason", "incident 42"); code != 0 {
		t.Fatalf("freeze: exit %d\n%s", code, out)
	}
	const held = `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`
	check := func(what string, want, wantHolder string) {
		t.Helper()
		if budgets, holder := holdOf(t, env, "web-git"); budgets != want || holder != wantHolder {
			t.Fatalf("after %s: budgets %s held by %q, want %s held by %q", what, budgets, holder, want, wantHolder)
		}
	}
	check("the freeze", held, "freeze")
	for _, apply := range [][]string{
		ssa,
		{"apply", "-f", git},
		{"replace", "-f", git},
		ssa,
	} {
		res := env.Kubectl(nil, apply...)
		if res.ExitCode != 0 || !strings.Contains(res.Stderr, "karpgate kept its freeze of drift in spec.disruption.budgets[1]") {
			t.Fatalf("kubectl %s: exit %d\n%s", strings.Join(apply, " "), res.ExitCode, res.Stderr)
		}
		check("kubectl "+strings.Join(apply, " "), held, "freeze")
	}
	// What Argo CD's server-side diff and Flux's drift detection see: a
	// server-side dry run of the Git version equals the live object.
	if res := env.Kubectl(nil, "diff", "--server-side", "--field-manager=argocd-controller", "--force-conflicts", "-f", git); res.ExitCode != 0 {
		t.Errorf("kubectl diff --server-side: exit %d, want 0 (no drift)\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if code, out := karpgateRun(t, env, "resume", "web-git"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	check("resume", `[{"nodes":"10%"}]`, "")
	env.MustKubectl(nil, ssa...)
	check("an apply after the resume", `[{"nodes":"10%"}]`, "")
}
