package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// TestWaiverGovernanceAtAdmission drives waivers through the real API
// server and both webhooks. Out of the box (no approvers), the review's
// self-waiving JSON patch is refused. With waivers.approvers set, a user it
// does not name cannot add a waiver (the API server says who writes, and
// karpgate refuses with KG006); an approver can, in the very write the
// waiver excuses, and karpgate records who; a waiver past its expiry no
// longer waives. With the mutating webhook gone, as when it fails open, a
// forged record of who set a waiver is refused and a write that leaves the
// waivers alone goes through.
func TestWaiverGovernanceAtAdmission(t *testing.T) {
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{
		Serve: func(o *serve.Options) { o.ReloadInterval = 100 * time.Millisecond },
	})
	env.MustKubectl(nil, "apply", "-f", "../../examples/ec2nodeclass-production-pinned.yaml")
	aliasOf := func(class string) string {
		return env.MustKubectl(nil, "get", "ec2nodeclass", class, "-o", "jsonpath={.spec.amiSelectorTerms[0].alias}")
	}
	const selfWaiving = `[{"op":"remove","path":"/metadata/labels/karpgate.io~1environment"},` +
		`{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"},` +
		`{"op":"add","path":"/metadata/annotations","value":{"karpgate.io/waive-KG604":"leaving production","karpgate.io/waive-KG101":"testing AMIs"}}]`
	res := env.Kubectl(nil, "patch", "ec2nodeclass", "production", "--type=json", "-p", selfWaiving)
	for _, want := range []string{
		`KG101 spec.amiSelectorTerms[0].alias: alias "al2023@latest" follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass; the waiver karpgate.io/waive-KG101 does not waive it, because this same write adds or changes it`,
		`KG604 metadata.labels[karpgate.io/environment]: this update takes EC2NodeClass/production out of production`,
		`the waiver karpgate.io/waive-KG604 does not waive it`,
		`or add the waiver in a separate, earlier write that someone reviews, or name who may waive in karpgate.yaml (waivers.approvers))`,
	} {
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, want) {
			t.Fatalf("the self-waiving patch: exit %d, stderr lacks\n%s\n%s", res.ExitCode, want, res.Stderr)
		}
	}
	if alias := aliasOf("production"); alias != "al2023@v20240807" {
		t.Fatalf("alias %q after the refused patch", alias)
	}

	replaceFile(t, cluster.ConfigPath, []byte("apiVersion: karpgate.io/v1alpha1\nkind: Config\nwaivers:\n  approvers:\n    groups: [platform]\n"))
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
	wait.For(t, "the approvers to be read", func() bool {
		res := env.Kubectl(nil, append([]string{"annotate", "--overwrite", "--dry-run=server", "ec2nodeclass", "staging-latest", "karpgate.io/waive-KG102=x"}, as("mallory")...)...)
		return strings.Contains(res.Stderr, "KG006")
	})
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
	// An approver's waivers excuse the write that adds them.
	if res := env.Kubectl(nil, append([]string{"patch", "ec2nodeclass", "production", "--type=json", "-p", selfWaiving}, as("alice", "platform")...)...); res.ExitCode != 0 ||
		!strings.Contains(res.Stderr, `KG101 waived by annotation karpgate.io/waive-KG101 ("testing AMIs")`) {
		t.Fatalf("an approver's self-waiving patch: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	if alias := aliasOf("production"); alias != "al2023@latest" {
		t.Fatalf("alias %q after the approver's patch", alias)
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

	// The mutating webhook fails open: without it, a client's record of
	// who set a waiver reaches the validating webhook as written.
	env.MustKubectl(nil, "delete", "mutatingwebhookconfiguration", "karpgate")
	forged := `{"KG102":{"user":"ceo@example.com","at":"2026-01-05T08:30:00Z"}}`
	res = env.Kubectl(nil, append([]string{"annotate", "--overwrite", "ec2nodeclass", "staging-latest", "karpgate.io/waive-KG102=dev account", "karpgate.io/waivers-set-by=" + forged}, as("mallory", "platform")...)...)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, `the annotation karpgate.io/waivers-set-by is not the record karpgate keeps of who set each waiver`) ||
		!strings.Contains(res.Stderr, `KG102: the entry names "ceo@example.com", but the write that adds or changes the waiver is made by "mallory"`) {
		t.Fatalf("a forged record: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	if record := annotations(t, env, "staging-latest")["karpgate.io/waivers-set-by"]; strings.Contains(record, "ceo@example.com") {
		t.Fatalf("the forged record was stored: %s", record)
	}
	// An honest waiver while the mutating webhook is down: the record
	// still names alice, who set the waiver before; refused, saying why.
	if code, stderr := annotate("dev account, again", as("bob", "platform")...); code != 1 ||
		!strings.Contains(stderr, "karpgate's mutating webhook (mutate.karpgate.io), which keeps the record, did not run on this write") {
		t.Fatalf("a waiver without the mutating webhook: exit %d\n%s", code, stderr)
	}
	// A write that leaves the waivers alone carries the record through.
	if res := env.Kubectl(nil, "label", "--overwrite", "ec2nodeclass", "staging-latest", "team=web"); res.ExitCode != 0 {
		t.Fatalf("a label change without the mutating webhook: %s", res.Stderr)
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
// diff sees no drift; deleting the frozen NodePool is refused; resume
// ends the hold, and the next apply keeps it ended.
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
	// Deleting the frozen NodePool (a GitOps prune, say) is refused.
	if res := env.Kubectl(nil, "delete", "nodepool", "web-git", "--wait=false"); res.ExitCode == 0 ||
		!strings.Contains(res.Stderr, "NodePool web-git is frozen: karpgate's freeze (since ") || !strings.Contains(res.Stderr, "lift the freeze first with `karpgate resume web-git`") {
		t.Fatalf("kubectl delete of the frozen NodePool: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	check("the refused delete", held, "freeze")
	if code, out := karpgateRun(t, env, "resume", "web-git"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	check("resume", `[{"nodes":"10%"}]`, "")
	env.MustKubectl(nil, ssa...)
	check("an apply after the resume", `[{"nodes":"10%"}]`, "")

	forgedHoldIsLifted(t, env, ssa, check)
}

// forgedHoldIsLifted (issue #38): a record dated in 2099 is refused at
// admission; one stored before karpgate refused such dates (here, while
// the validating webhook was lifted, as docs/disruption.md says to do
// while karpgate is down) is lifted by `karpgate resume`, and stays lifted
// through a GitOps apply of the Git version and one more write.
func forgedHoldIsLifted(t *testing.T, env *testenv.Env, ssa []string, check func(what, want, wantHolder string)) {
	t.Helper()
	const (
		free   = `[{"nodes":"10%"}]`
		forged = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2099-01-01T00:00:00Z","reason":"forged","by":"freeze"}`
	)
	holdPatch := `[{"op":"add","path":"/spec/disruption/budgets/-","value":` + zeroDrift + `},
		{"op":"add","path":"/metadata/annotations/karpgate.io~1rollout-guard","value":` + jsonString(forged) + `}]`
	res := env.Kubectl(nil, "patch", "nodepool", "web-git", "--type=json", "-p", holdPatch)
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, `metadata.annotations[karpgate.io/rollout-guard]: "since" is 2099-01-01T00:00:00Z, later than karpgate's clock`) {
		t.Fatalf("a hold dated 2099: exit %d, want it refused\n%s", res.ExitCode, res.Stderr)
	}
	check("the refused hold of 2099", free, "")

	gate := env.MustKubectl(nil, "get", "validatingwebhookconfiguration", "karpgate", "-o", "json")
	env.MustKubectl(nil, "delete", "validatingwebhookconfiguration", "karpgate")
	// The API server drops the gate when its watch of configurations
	// sees the deletion.
	wait.ForNoError(t, "the hold of 2099 written without the gate", func() error {
		if res := env.Kubectl(nil, "patch", "nodepool", "web-git", "--type=json", "-p", holdPatch); res.ExitCode != 0 {
			return fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		return nil
	})
	env.MustKubectl(recreatable(t, gate), "create", "-f", "-")
	check("the hold of 2099, stored", `[{"nodes":"10%"},`+zeroDrift+`]`, "freeze")

	if code, out := karpgateRun(t, env, "resume", "web-git"); code != 0 || !strings.Contains(out, "NodePool web-git: removed karpgate's budget spec.disruption.budgets[1] (a freeze)") {
		t.Fatalf("resume of the hold of 2099: exit %d\n%s", code, out)
	}
	check("resume of the hold of 2099", free, "")
	env.MustKubectl(nil, ssa...)
	check("a GitOps apply after the resume", free, "")
	env.MustKubectl(nil, "label", "nodepool", "web-git", "team=web")
	check("one more write", free, "")
}

// recreatable is an object read from the API server, as JSON kubectl
// create accepts: without what the API server set.
func recreatable(t *testing.T, object string) []byte {
	t.Helper()
	var obj map[string]any
	decodeJSON(t, object, &obj)
	metadata := obj["metadata"].(map[string]any)
	for _, k := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"} {
		delete(metadata, k)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
