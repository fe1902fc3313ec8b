package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// fleetPlan is the plan of the rollout tests: the canary, then the rest.
const fleetPlan = `{"apiVersion":"karpgate.io/v1alpha1","kind":"RolloutPlan","metadata":{"name":"fleet"},
"spec":{"waves":[{"name":"canary","nodePoolSelector":{"matchLabels":{"karpgate.io/wave":"canary"}},"soak":"2s"},
{"name":"rest","nodePoolSelector":{"matchLabels":{"team":"shop"}},"soak":"2s"}],
"gates":{"nodeReadyTimeout":"10m"}}}`

// rolloutFleet is three NodePools on one EC2NodeClass, two NodeClaims each,
// with Ready nodes: canary in the first wave, general and payments in the
// second.
func rolloutFleet(t *testing.T, env *testenv.Env) {
	t.Helper()
	objs := []*unstructured.Unstructured{object(`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"production"},
		"spec":{"role":"KarpenterNodeRole","amiSelectorTerms":[{"alias":"al2023@v20240807"}],
		"subnetSelectorTerms":[{"tags":{"env":"production"}}],"securityGroupSelectorTerms":[{"tags":{"env":"production"}}]}}`)}
	for _, p := range []struct{ name, labels string }{{"canary", `"karpgate.io/wave":"canary","team":"shop"`}, {"general", `"team":"shop"`}, {"payments", `"team":"shop"`}} {
		objs = append(objs, object(fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":%q,"labels":{%s}},
			"spec":{"disruption":{"consolidateAfter":"Never","budgets":[{"nodes":"1"}]},"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"production"},"requirements":[]}}}}`, p.name, p.labels)))
		for i := 0; i < 2; i++ {
			objs = append(objs, claimAndNode(p.name, fmt.Sprintf("%s-old-%d", p.name, i))...)
		}
	}
	createWithStatus(t, env.Client, objs)
}

// claimAndNode is a launched, registered and initialized NodeClaim with its
// Ready node, as Karpenter and the kubelet leave them.
func claimAndNode(pool, name string) []*unstructured.Unstructured {
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(t string) string {
		return fmt.Sprintf(`{"type":%q,"status":"True","reason":%q,"message":"","lastTransitionTime":%q}`, t, t, now)
	}
	return []*unstructured.Unstructured{
		object(fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"name":%q,"labels":{"karpenter.sh/nodepool":%q}},
			"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"production"},"requirements":[]},
			"status":{"providerID":"aws:///us-east-1a/i-%s","nodeName":"node-%s","conditions":[%s,%s,%s]}}`,
			name, pool, name, name, cond("Launched"), cond("Registered"), cond("Initialized"))),
		object(fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%s","labels":{"karpenter.sh/nodepool":%q,"karpenter.sh/initialized":"true"}},
			"spec":{"providerID":"aws:///us-east-1a/i-%s"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"","lastHeartbeatTime":null,"lastTransitionTime":null}]}}`,
			name, pool, name)),
	}
}

// driftPools marks every NodeClaim of the pools Drifted, as Karpenter does
// once an EC2NodeClass resolves a new AMI.
func driftPools(t *testing.T, env *testenv.Env, reason string, pools ...string) {
	t.Helper()
	for _, pool := range pools {
		for _, nc := range claimsOf(t, env, pool) {
			setCondition(t, env.Client, nc.GetName(), "Drifted", "True", reason, time.Now())
		}
	}
}

// replacePool replaces the pool's drifted NodeClaims as Karpenter does:
// the replacement launches and becomes Ready, then the old one goes.
func replacePool(t *testing.T, env *testenv.Env, pool, generation string) {
	t.Helper()
	for i, nc := range claimsOf(t, env, pool) {
		if !isDrifted(nc) {
			continue
		}
		createWithStatus(t, env.Client, claimAndNode(pool, fmt.Sprintf("%s-%s-%d", pool, generation, i)))
		node := object(fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%s"}}`, nc.GetName()))
		for _, obj := range []client.Object{&nc, node} {
			if err := env.Client.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
		}
	}
}

func claimsOf(t *testing.T, env *testenv.Env, pool string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("karpenter.sh/v1")
	list.SetKind("NodeClaimList")
	if err := env.Client.List(context.Background(), list, client.MatchingLabels{"karpenter.sh/nodepool": pool}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func isDrifted(nc unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == "Drifted" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// planHolder names who holds a NodePool: "" for nobody, else the record's
// "by" ("rolloutplan/fleet", "freeze", or "guard" for the guard's).
func planHolder(t *testing.T, env *testenv.Env, pool string) string {
	t.Helper()
	budgets, annotations := budgetsOf(t, env.Client, pool)
	record, ok := annotations["karpgate.io/rollout-guard"]
	if !ok {
		return ""
	}
	var m struct{ By, Under string }
	if err := json.Unmarshal([]byte(record), &m); err != nil {
		t.Fatalf("NodePool %s: record %q: %v", pool, record, err)
	}
	if !strings.Contains(budgets, `{"nodes":"0","reasons":["Drifted"]}`) {
		t.Fatalf("NodePool %s: record %q without the hold budget: %s", pool, record, budgets)
	}
	if m.By == "" {
		return "guard"
	}
	if m.Under != "" {
		return m.By + " over " + m.Under
	}
	return m.By
}

func getPlan(t *testing.T, env *testenv.Env, name string) *v1alpha1.RolloutPlan {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("karpgate.io/v1alpha1")
	u.SetKind("RolloutPlan")
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, u); err != nil {
		t.Fatal(err)
	}
	plan := &v1alpha1.RolloutPlan{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, plan); err != nil {
		t.Fatal(err)
	}
	return plan
}

// waitPlan waits until the plan is in phase at wave, observed, with the
// NodePools held as want says.
func waitPlan(t *testing.T, env *testenv.Env, what string, phase v1alpha1.Phase, wave string, want map[string]string) {
	t.Helper()
	wait.ForNoError(t, what, func() error {
		plan := getPlan(t, env, "fleet")
		if plan.Status.Phase != phase || plan.Status.CurrentWave != wave || plan.Status.ObservedGeneration != plan.Generation {
			return fmt.Errorf("plan %s at %s (generation %d observed %d)", plan.Status.Phase, plan.Status.CurrentWave, plan.Generation, plan.Status.ObservedGeneration)
		}
		for pool, holder := range want {
			if got := planHolder(t, env, pool); got != holder {
				return fmt.Errorf("NodePool %s held by %q, want %q", pool, got, holder)
			}
		}
		return nil
	})
}

const byFleet = "rolloutplan/fleet"

// TestRolloutPlanCarriesAnAMIChangeThroughTheWaves runs karpgate serve (its
// webhooks and its loop with the rollout plans' controller) on a real API
// server with Karpenter v1.15's CRDs; the test plays Karpenter: an
// EC2NodeClass AMI change drifts every NodeClaim of three NodePools, and
// the test replaces only what the budgets let Karpenter replace. It walks
// one change through both waves, then pause, resume, abort, a freeze over
// the plan and the admission of a second plan.
func TestRolloutPlanCarriesAnAMIChangeThroughTheWaves(t *testing.T) {
	for _, release := range []karpenterstack.Release{karpenterstack.Newest, karpenterstack.Releases[len(karpenterstack.Releases)-1]} {
		t.Run(release.Version, func(t *testing.T) {
			t.Parallel()
			env, _ := testenv.StartKarpgate(t, localcluster.Options{Controller: true, Release: release})
			rolloutFleet(t, env)
			env.MustKubectl([]byte(fleetPlan), "apply", "-f", "-")
			waitPlan(t, env, "the idle plan holds the second wave", v1alpha1.PhaseIdle, "canary",
				map[string]string{"canary": "", "general": byFleet, "payments": byFleet})
			if c := meta.FindStatusCondition(getPlan(t, env, "fleet").Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != "True" {
				t.Errorf("idle plan: Ready %+v", c)
			}
			out := env.MustKubectl(nil, "get", "rolloutplans")
			if !strings.Contains(out, "fleet") || !strings.Contains(out, "Idle") || !strings.Contains(out, "canary") {
				t.Errorf("kubectl get rolloutplans:\n%s", out)
			}

			// The AMI promotion: every NodeClaim drifts at once.
			env.MustKubectl(nil, "patch", "ec2nodeclasses.v1.karpenter.k8s.aws", "production", "--type=merge",
				"-p", `{"spec":{"amiSelectorTerms":[{"alias":"al2023@v20241001"}]}}`)
			driftPools(t, env, "AMIDrift", "canary", "general", "payments")
			waitPlan(t, env, "the canary rolls, the rest is held", v1alpha1.PhaseRolling, "canary",
				map[string]string{"canary": "", "general": byFleet, "payments": byFleet})
			if release.Converts {
				// Karpenter v1.0.8's CRDs: the hold is a v1 budget with
				// reasons, and the v1beta1 view (no reasons) still has it.
				budgets := env.MustKubectl(nil, "get", "nodepools.v1beta1.karpenter.sh", "general", "-o", "jsonpath={.spec.disruption.budgets}")
				if !strings.Contains(budgets, `"nodes":"0"`) {
					t.Errorf("v1beta1 view of the held NodePool: budgets %s", budgets)
				}
				return
			}
			replacePool(t, env, "canary", "v2")
			waitPlan(t, env, "the canary is done and the rest rolls", v1alpha1.PhaseRolling, "rest",
				map[string]string{"canary": byFleet, "general": "", "payments": ""})
			replacePool(t, env, "general", "v2")
			replacePool(t, env, "payments", "v2")
			waitPlan(t, env, "the pass completes", v1alpha1.PhaseIdle, "canary",
				map[string]string{"canary": "", "general": byFleet, "payments": byFleet})
			plan := getPlan(t, env, "fleet")
			if c := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonRolloutComplete || plan.Status.Waves[1].Replaced != 4 {
				t.Errorf("after the pass: Ready %+v, waves %+v", c, plan.Status.Waves)
			}

			t.Run("pause, resume, abort", func(t *testing.T) { pauseResumeAbort(t, env) })
			t.Run("a freeze over the plan", func(t *testing.T) { freezeOverPlan(t, env) })
			t.Run("a NodePool in two plans is refused", func(t *testing.T) { twoPlansRefused(t, env) })
		})
	}
}

func pauseResumeAbort(t *testing.T, env *testenv.Env) {
	driftPools(t, env, "AMIDrift", "canary", "general", "payments")
	waitPlan(t, env, "a second change rolls in the canary", v1alpha1.PhaseRolling, "canary", map[string]string{"general": byFleet})
	if code, out := karpgateRun(t, env, "rollout", "pause", "fleet"); code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("rollout pause: exit %d\n%s", code, out)
	}
	replacePool(t, env, "canary", "v3")
	waitPlan(t, env, "paused after the canary", v1alpha1.PhasePaused, "canary",
		map[string]string{"canary": byFleet, "general": byFleet, "payments": byFleet})
	if code, out := karpgateRun(t, env, "rollout", "resume", "fleet"); code != 0 || !strings.Contains(out, "unpaused") {
		t.Fatalf("rollout resume: exit %d\n%s", code, out)
	}
	waitPlan(t, env, "resumed: the rest rolls", v1alpha1.PhaseRolling, "rest", map[string]string{"general": "", "payments": ""})
	if code, out := karpgateRun(t, env, "rollout", "abort", "fleet"); code != 0 || !strings.Contains(out, "aborted at wave rest") {
		t.Fatalf("rollout abort: exit %d\n%s", code, out)
	}
	waitPlan(t, env, "aborted: the rolling wave is held too", v1alpha1.PhaseAborted, "rest",
		map[string]string{"canary": byFleet, "general": byFleet, "payments": byFleet})
	// A person lifts one hold; the aborted plan leaves it lifted, and says
	// so by counting one NodePool fewer.
	if code, out := karpgateRun(t, env, "resume", "general"); code != 0 || !strings.Contains(out, "removed karpgate's budget") {
		t.Fatalf("resume general: exit %d\n%s", code, out)
	}
	wait.ForNoError(t, "the aborted plan counts the lifted hold", func() error {
		if n := getPlan(t, env, "fleet").Status.HeldNodePools; n != 2 {
			return fmt.Errorf("%d NodePools held", n)
		}
		return nil
	})
	if h := planHolder(t, env, "general"); h != "" {
		t.Errorf("the aborted plan held general again: %q", h)
	}
	out := func() string { _, out := karpgateRun(t, env, "rollout", "status", "fleet"); return out }()
	if !strings.Contains(out, "stopped at wave rest (Aborted") {
		t.Errorf("rollout status of the aborted plan:\n%s", out)
	}
	if code, out := karpgateRun(t, env, "rollout", "resume", "fleet"); code != 0 || !strings.Contains(out, "wave rest rolls again") {
		t.Fatalf("rollout resume after abort: exit %d\n%s", code, out)
	}
	waitPlan(t, env, "retried: the rest rolls again", v1alpha1.PhaseRolling, "rest", map[string]string{"canary": byFleet, "general": "", "payments": ""})
	replacePool(t, env, "general", "v3")
	replacePool(t, env, "payments", "v3")
	waitPlan(t, env, "the second pass completes", v1alpha1.PhaseIdle, "canary", map[string]string{"general": byFleet})
}

func freezeOverPlan(t *testing.T, env *testenv.Env) {
	if code, out := karpgateRun(t, env, "freeze", "general", "canary", "--reason", "INC-7: CNI broken"); code != 0 || !strings.Contains(out, "took over rollout plan fleet's wave hold") {
		t.Fatalf("freeze: exit %d\n%s", code, out)
	}
	if got := planHolder(t, env, "general"); got != "freeze over "+byFleet {
		t.Errorf("general after freeze: %q", got)
	}
	// The canary is free while the plan is idle: the freeze holds it, and
	// a change does not roll there while frozen.
	driftPools(t, env, "AMIDrift", "canary")
	waitPlan(t, env, "the canary's wave waits for the freeze", v1alpha1.PhaseRolling, "canary", map[string]string{"canary": "freeze"})
	wait.ForNoError(t, "the wave lists the frozen canary", func() error {
		if w := getPlan(t, env, "fleet").Status.Waves[0]; len(w.Frozen) != 1 {
			return fmt.Errorf("wave %+v", w)
		}
		return nil
	})
	if code, out := karpgateRun(t, env, "resume", "general", "canary"); code != 0 || !strings.Contains(out, "stays as the wave hold of rollout plan fleet") {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	waitPlan(t, env, "the freeze lifted, the plan holds general again and rolls the canary", v1alpha1.PhaseRolling, "canary",
		map[string]string{"general": byFleet, "canary": ""})
	replacePool(t, env, "canary", "v4")
	waitPlan(t, env, "the canary-only change completes", v1alpha1.PhaseIdle, "canary", map[string]string{"general": byFleet})
}

func twoPlansRefused(t *testing.T, env *testenv.Env) {
	res := env.Kubectl([]byte(`{"apiVersion":"karpgate.io/v1alpha1","kind":"RolloutPlan","metadata":{"name":"payments-first"},
"spec":{"waves":[{"name":"payments","nodePoolSelector":{"matchLabels":{"team":"shop"}},"nodePools":1}]}}`), "apply", "-f", "-")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "spec.waves[0].nodePoolSelector: NodePool canary is already in rollout plan fleet (wave canary)") ||
		!strings.Contains(res.Stderr, "a NodePool can be in one rollout plan only") {
		t.Errorf("a plan taking fleet's NodePool: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	env.MustKubectl([]byte(`{"apiVersion":"karpgate.io/v1alpha1","kind":"RolloutPlan","metadata":{"name":"gpu"},
"spec":{"waves":[{"name":"all","nodePoolSelector":{"matchLabels":{"team":"gpu"}}}]}}`), "apply", "-f", "-")
	res = env.Kubectl(nil, "label", "nodepools.v1.karpenter.sh", "general", "team=gpu", "--overwrite")
	if res.ExitCode != 0 {
		t.Fatalf("moving general from plan fleet to plan gpu is allowed: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	res = env.Kubectl(nil, "label", "nodepools.v1.karpenter.sh", "general", "karpgate.io/wave=canary")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "NodePool/general: metadata.labels put it in 2 rollout plans: fleet (wave canary) and gpu (wave all)") {
		t.Errorf("a label putting general in two plans: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	// general left fleet: fleet releases it, gpu (idle, one wave) leaves it free.
	waitPlan(t, env, "fleet releases the NodePool that left it", v1alpha1.PhaseIdle, "canary", map[string]string{"general": "", "payments": byFleet})
}
