package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

const (
	zeroDrift   = `{"nodes":"0","reasons":["Drifted"]}`
	olderRecord = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-04T10:00:00Z","reason":"1 NodeClaim(s) launched during the drift rollout have no Ready Node after 15m0s: legacy-1"}`
)

func nodePoolObject(name, labels, annotations, budgets string) *unstructured.Unstructured {
	return object(fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":%q,"labels":{%s},"annotations":{%s}},
		"spec":{"disruption":{"budgets":%s},"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]}}}}`,
		name, labels, annotations, budgets))
}

func karpgateRun(t *testing.T, env *testenv.Env, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := app.Execute(append(args, "--kubeconfig", env.KubeconfigPath), nil, &out, &errOut)
	return code, out.String() + errOut.String()
}

// holdOf returns a NodePool's budgets as JSON and the holder its record
// names: "freeze", "guard" or "".
func holdOf(t *testing.T, env *testenv.Env, name string) (string, string) {
	t.Helper()
	budgets, annotations := budgetsOf(t, env.Client, name)
	record, ok := annotations["karpgate.io/rollout-guard"]
	switch {
	case !ok:
		return budgets, ""
	case strings.Contains(record, `"by":"freeze"`):
		return budgets, "freeze"
	default:
		return budgets, "guard"
	}
}

// TestFreezeAndResume: freeze by selector and for all, never touching a
// budget karpgate did not add, leaving freezes already there and taking
// over the rollout guard's hold, which the loop with the guard off would
// otherwise lift in the middle of an incident; the loop lifts no freeze;
// resume --all lifts everything karpgate added.
func TestFreezeAndResume(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	original := map[string]string{
		"pay-a":  `[{"nodes":"10%"},` + zeroDrift + `]`, // the user's own budget equals karpgate's
		"pay-b":  `[{"nodes":"20%"}]`,
		"web":    `[]`,
		"legacy": `[{"nodes":"10%"},` + zeroDrift + `]`, // held by an older karpgate's rollout guard
	}
	createWithStatus(t, env.Client, []*unstructured.Unstructured{
		nodePoolObject("pay-a", `"team":"pay"`, "", original["pay-a"]),
		nodePoolObject("pay-b", `"team":"pay"`, "", original["pay-b"]),
		nodePoolObject("web", "", "", original["web"]),
		nodePoolObject("legacy", "", fmt.Sprintf(`"karpgate.io/rollout-guard":%q`, olderRecord), original["legacy"]),
	})
	frozenBudgets := func(name string) string {
		return strings.TrimSuffix(original[name], "]") + map[bool]string{true: "", false: ","}[original[name] == "[]"] + zeroDrift + "]"
	}

	code, out := karpgateRun(t, env, "freeze", "--selector", "team=pay", "--reason", "AMI v2 breaks the CNI", "--dry-run")
	if code != 0 || !strings.Contains(out, "NodePool pay-a: would freeze: added spec.disruption.budgets[2]") || !strings.Contains(out, "would freeze (dry run: nothing changed) 2 of 2") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if got, holder := holdOf(t, env, "pay-a"); got != original["pay-a"] || holder != "" {
		t.Fatalf("the dry run changed pay-a: %s %s", got, holder)
	}

	code, out = karpgateRun(t, env, "freeze", "--selector", "team=pay", "--reason", "AMI v2 breaks the CNI")
	if code != 0 || !strings.Contains(out, "froze 2 of 2 NodePool(s)") {
		t.Fatalf("freeze --selector: exit %d\n%s", code, out)
	}
	for _, name := range []string{"pay-a", "pay-b"} {
		if got, holder := holdOf(t, env, name); got != frozenBudgets(name) || holder != "freeze" {
			t.Errorf("%s after freeze: %s (%s), want %s (freeze)", name, got, holder, frozenBudgets(name))
		}
	}
	code, out = karpgateRun(t, env, "freeze", "--all", "--reason", "incident 42")
	for _, want := range []string{
		"NodePool legacy: frozen: took over the rollout guard's hold at spec.disruption.budgets[1]; `karpgate resume` lifts both",
		"NodePool pay-a: a freeze already holds it since",
		"NodePool web: frozen: added spec.disruption.budgets[0]",
		"froze 2 of 4 NodePool(s); 2 already held",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("freeze --all: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	code, out = karpgateRun(t, env, "status")
	if code != 0 || !strings.Contains(out, "web: drift is frozen since") || !strings.Contains(out, "incident 42; `karpgate resume web` or `karpgate resume --all` lifts it") ||
		!strings.Contains(out, "legacy: drift is frozen since") {
		t.Errorf("status: exit %d\n%s", code, out)
	}

	// The guard is off: the loop lifts no freeze, not even the one laid over
	// the guard's own older hold.
	registry := prometheus.NewRegistry()
	loop := startLoop(t, env, manager.Options{}, controller.Options{Name: "karpgate-freeze", Registerer: registry})
	wait.ForNoError(t, "every freeze kept", func() error {
		return testutil.GatherAndCompare(registry, strings.NewReader(`
# HELP karpgate_nodepool_drift_frozen 1 while a freeze (karpgate freeze, or the rollout guard's cluster-wide trip) holds the NodePool's drift disruptions at zero.
# TYPE karpgate_nodepool_drift_frozen gauge
karpgate_nodepool_drift_frozen{nodepool="legacy"} 1
karpgate_nodepool_drift_frozen{nodepool="pay-a"} 1
karpgate_nodepool_drift_frozen{nodepool="pay-b"} 1
karpgate_nodepool_drift_frozen{nodepool="web"} 1
`), "karpgate_nodepool_drift_frozen")
	})
	loop.stop() // every reconcile has finished: nothing can lift a freeze behind the checks below
	for _, name := range []string{"pay-a", "pay-b", "web", "legacy"} {
		if _, holder := holdOf(t, env, name); holder != "freeze" {
			t.Errorf("the loop with the guard off lifted the freeze of %s", name)
		}
	}

	code, out = karpgateRun(t, env, "resume", "pay-a", "nope")
	if code != app.ExitNotAllChanged || !strings.Contains(out, "NodePool nope: not resumed") || !strings.Contains(out, "NodePool pay-a: removed karpgate's budget spec.disruption.budgets[2] (a freeze)") {
		t.Errorf("resume with a missing NodePool: exit %d\n%s", code, out)
	}
	code, out = karpgateRun(t, env, "resume", "--all")
	if code != 0 || !strings.Contains(out, "resumed 3 of 4 NodePool(s)") || !strings.Contains(out, "NodePool legacy: removed karpgate's budget spec.disruption.budgets[1] (a freeze)") {
		t.Errorf("resume --all: exit %d\n%s", code, out)
	}
	original["legacy"] = `[{"nodes":"10%"}]`
	for name, want := range original {
		if got, holder := holdOf(t, env, name); got != want || holder != "" {
			t.Errorf("%s after resume: %s (%s), want %s", name, got, holder, want)
		}
	}
	if code, out := karpgateRun(t, env, "resume", "nope"); code != app.ExitUsage || !strings.Contains(out, "not found") {
		t.Errorf("resume of a missing NodePool: exit %d\n%s", code, out)
	}
}

// stuckPool is a NodePool whose drift rollout is under way (name-0 drifted
// an hour ago) and whose replacement name-1 has no Node.
func stuckPool(name string, now time.Time) []*unstructured.Unstructured {
	claim := func(claimName, status string) *unstructured.Unstructured {
		return object(fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"name":%q,"labels":{"karpenter.sh/nodepool":%q}},
			"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]},"status":%s}`, claimName, name, status))
	}
	return []*unstructured.Unstructured{
		nodePoolObject(name, "", "", `[{"nodes":"50%"}]`),
		claim(name+"-0", fmt.Sprintf(`{"providerID":"aws:///us-east-1a/i-%s-0","conditions":[{"type":"Drifted","status":"True","reason":"AMIDrift","message":"","lastTransitionTime":%q}]}`,
			name, now.Add(-time.Hour).Format(time.RFC3339))),
		object(fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%s-0","labels":{"karpenter.sh/nodepool":%q,"karpenter.sh/initialized":"true"}},
			"spec":{"providerID":"aws:///us-east-1a/i-%s-0"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"","lastHeartbeatTime":null,"lastTransitionTime":null}]}}`,
			name, name, name)),
		claim(name+"-1", `{"conditions":[]}`),
	}
}

// TestRolloutGuardTripsAClusterWideFreeze: with --rollout-guard-freeze-after
// 2, the guard holding two NodePools freezes drift in every NodePool; the
// freeze stays when the guard is turned off, and resume --all lifts it all.
// A record that vouches for no hold does not count (issue #38).
func TestRolloutGuardTripsAClusterWideFreeze(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	start := time.Now().UTC().Truncate(time.Second)
	objs := append(stuckPool("g1", start), stuckPool("g2", start)...)
	objs = append(objs, nodePoolObject("bystander", "", "", `[{"nodes":"10%"}]`),
		// A guard record of a budget the guard never adds ({nodes "0"}
		// holds every reason): no drift rollout held, so it must not
		// count towards the freeze; the freeze replaces the record with
		// its own, and resume lifts that and leaves the decoy's budget.
		nodePoolObject("decoy", "", `"karpgate.io/rollout-guard":`+jsonString(`{"budget":{"nodes":"0"},"index":1,"since":"2026-01-05T08:00:00Z","reason":"not the guard's"}`), decoyBudgets))
	createWithStatus(t, env.Client, objs)
	clk := clocktesting.NewFakeClock(start)
	registry := prometheus.NewRegistry()
	loop := startLoop(t, env, manager.Options{}, controller.Options{Name: "karpgate-trip", Clock: clk, Registerer: registry,
		Guard: controller.GuardOptions{Enabled: true, ReadyTimeout: 10 * time.Minute, FreezeAfter: 2}})
	// Events compare a NodePool's status with the last one the loop saw:
	// each NodePool must have been reconciled once before the freeze, or
	// there is nothing to compare with (its metrics are set in the same
	// reconcile, just before its events).
	wait.ForNoError(t, "every NodePool reconciled before the timeout", func() error {
		if _, holder := holdOf(t, env, "g1"); holder != "" {
			return fmt.Errorf("g1 held before the timeout")
		}
		for _, name := range []string{"g1", "g2", "bystander"} {
			if !hasPoolMetrics(t, registry, name) {
				return fmt.Errorf("%s not reconciled yet", name)
			}
		}
		return nil
	})
	clk.Step(11 * time.Minute)
	wait.ForNoError(t, "two guard holds trip the freeze", func() error {
		for name, want := range map[string]string{"g1": "guard", "g2": "guard", "bystander": "freeze", "decoy": "freeze"} {
			if _, holder := holdOf(t, env, name); holder != want {
				return fmt.Errorf("%s held by %q, want %q", name, holder, want)
			}
		}
		return nil
	})
	_, annotations := budgetsOf(t, env.Client, "bystander")
	var record struct{ Reason string }
	if err := json.Unmarshal([]byte(annotations["karpgate.io/rollout-guard"]), &record); err != nil ||
		record.Reason != "the rollout guard holds 2 NodePools (g1, g2), at least --rollout-guard-freeze-after=2: drift is frozen cluster-wide" {
		t.Errorf("the freeze record: %q (%v)", record.Reason, err)
	}
	wait.ForNoError(t, "the freeze event", func() error {
		if note := eventNote(t, env.Client, "karpgate-trip", "bystander", "DriftFrozen"); !strings.Contains(note, "karpgate resume --all") {
			return fmt.Errorf("note %q", note)
		}
		return nil
	})
	loop.stop()
	if code, out := karpgateRun(t, env, "resume", "--all"); code != 0 || !strings.Contains(out, "resumed 4 of 4") ||
		!strings.Contains(out, "NodePool decoy: removed karpgate's budget spec.disruption.budgets[2] (a freeze)") {
		t.Errorf("resume --all: exit %d\n%s", code, out)
	}
	if got, holder := holdOf(t, env, "bystander"); holder != "" || got != `[{"nodes":"10%"}]` {
		t.Errorf("bystander after resume: %s (%s)", got, holder)
	}
	if got, holder := holdOf(t, env, "decoy"); holder != "" || got != decoyBudgets {
		t.Errorf("decoy after resume: %s (%s), want %s", got, holder, decoyBudgets)
	}
}

const decoyBudgets = `[{"nodes":"50%"},{"nodes":"0"}]`

// hasPoolMetrics says whether the loop has exported metrics for a NodePool.
func hasPoolMetrics(t *testing.T, registry *prometheus.Registry, pool string) bool {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "nodepool" && l.GetValue() == pool {
					return true
				}
			}
		}
	}
	return false
}
