package karpentere2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/test/testenv"
)

// Soaks of the live plan: short, and long enough that karpgate is stopped
// and started again within the canary's.
const (
	canarySoak = 20 * time.Second
	restSoak   = 5 * time.Second
)

func rolloutPlanYAML(nodeReadyTimeout string) string {
	return fmt.Sprintf(`apiVersion: karpgate.io/v1alpha1
kind: RolloutPlan
metadata: {name: fleet}
spec:
  gates: {nodeReadyTimeout: %s}
  waves:
    - {name: canary, nodePoolSelector: {matchLabels: {karpgate.io/wave: canary}}, soak: %s}
    - {name: rest, nodePoolSelector: {matchLabels: {team: shop}}, soak: %s}
`, nodeReadyTimeout, canarySoak, restSoak)
}

var rolloutPools = []string{"canary", "general", "payments"}

// fleetAt is the three NodePools of the plan at a template release, as Git
// holds them: one node each, at most one disrupted at once.
func fleetAt(release, fault string) string {
	var docs []string
	for _, name := range rolloutPools {
		labels := map[string]string{"team": "shop"}
		if name == "canary" {
			labels["karpgate.io/wave"] = "canary"
		}
		docs = append(docs, pool{Name: name, Release: release, Fault: fault, Budgets: `[{"nodes":"1"}]`, ConsolidateAfter: "Never", Labels: labels}.yaml())
	}
	return strings.Join(docs, "---\n")
}

// applyFromGit applies manifests with server-side apply, as a GitOps tool
// does: Git's budgets own the list, and karpgate's webhook keeps its hold.
func applyFromGit(t *testing.T, env *testenv.Env, manifests string) {
	t.Helper()
	res := env.Kubectl([]byte(manifests), "apply", "--server-side", "--field-manager=gitops", "--force-conflicts", "-f", "-")
	if res.ExitCode != 0 {
		t.Fatalf("server-side apply: exit %d\n%s", res.ExitCode, res.Stderr)
	}
}

func livePlan(env *testenv.Env) (*v1alpha1.RolloutPlan, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("karpgate.io/v1alpha1")
	u.SetKind("RolloutPlan")
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: "fleet"}, u); err != nil {
		return nil, err
	}
	plan := &v1alpha1.RolloutPlan{}
	return plan, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, plan)
}

func planIs(env *testenv.Env, phase v1alpha1.Phase, wave string) (*v1alpha1.RolloutPlan, error) {
	plan, err := livePlan(env)
	if err != nil {
		return nil, err
	}
	if plan.Status.Phase != phase || plan.Status.CurrentWave != wave || plan.Status.ObservedGeneration != plan.Generation {
		return plan, fmt.Errorf("plan %s at wave %s", plan.Status.Phase, plan.Status.CurrentWave)
	}
	return plan, nil
}

// claimNames lists the pools' NodeClaims and when each was created.
func claimNames(t *testing.T, env *testenv.Env, pools ...string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	for _, p := range pools {
		claims, err := nodeClaims(env, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, nc := range claims {
			out[nc.GetName()] = nc.GetCreationTimestamp().Time
		}
	}
	return out
}

// replaced reports whether none of the pools' NodeClaims is in before and
// none is drifted or being deleted.
func replaced(env *testenv.Env, before map[string]time.Time, pools ...string) error {
	for _, p := range pools {
		claims, err := nodeClaims(env, p)
		if err != nil {
			return err
		}
		if len(claims) == 0 {
			return fmt.Errorf("%s has no NodeClaim", p)
		}
		for _, nc := range claims {
			if _, old := before[nc.GetName()]; old || claimCondition(nc, "Drifted") == "True" || nc.GetDeletionTimestamp() != nil {
				return fmt.Errorf("%s: NodeClaim %s not replaced yet", p, nc.GetName())
			}
		}
	}
	return nil
}

// TestRolloutPlanOnARealKarpenter rolls one server-side apply that drifts
// three NodePools through a RolloutPlan on Karpenter v1.15.0, with karpgate
// stopped and started again during the canary's soak; measures the idle
// time between the soak's end and the next wave's first replacement, and
// the rollout against Karpenter alone on the same NodePools; then a change
// whose new canary nodes never become Ready stops the plan after the
// canary. Its own cluster: karpgate serve is stopped in the middle.
func TestRolloutPlanOnARealKarpenter(t *testing.T) {
	// Not parallel: its cluster is a third one beside the two the other
	// tests share, and with all three up on two cores, beside the other
	// e2e packages, the shared clusters' webhook calls ran past their 10 s
	// (the cold make test of acdf1a5). Run first and alone, it adds its
	// few minutes to a package that ends long before test/e2e does.
	release := karpenterstack.Newest
	assets := testenv.AssetsDir(t)
	dir, err := os.MkdirTemp("", "karpgate-rollout-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{AssetsDir: assets, Dir: dir, Controller: true, Karpenter: true, Release: release})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			printLogs(c)
			keepLogs(dir)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		_ = os.RemoveAll(dir)
	})
	env := testenv.Attach(t, c.ControlPlane)
	apply(t, env, nodeClassYAML)
	var deployments []string
	for _, p := range rolloutPools {
		deployments = append(deployments, deploymentYAML(p, 1))
	}
	applyFromGit(t, env, fleetAt("v1", ""))
	apply(t, env, deployments...)
	apply(t, env, rolloutPlanYAML("2m"))
	for _, p := range rolloutPools {
		waitLaunched(t, c, env, p, 1)
	}
	waitFor(t, "the idle plan holds the second wave", 2*time.Minute, func() error {
		_, err := planIs(env, v1alpha1.PhaseIdle, "canary")
		return err
	})

	m := measureRollout(t, c, env)
	baseline := karpenterAlone(t, c, env)
	t.Logf("MEASURED idle between the canary's soak end and the next wave's first replacement: %s (goal: at most 10s)", m.idle)
	t.Logf("MEASURED rollout through the plan: %s; Karpenter alone on the same NodePools and budgets: %s, plus the soaks (%s): %s; the plan's overhead: %s",
		m.total, baseline, canarySoak+restSoak, baseline+canarySoak+restSoak, m.total-baseline-canarySoak-restSoak)
	if m.idle > 20*time.Second {
		t.Errorf("the next wave started %s after the soak ended", m.idle)
	}
	failingCanary(t, c, env)
}

type rolloutMeasure struct{ idle, total time.Duration }

func measureRollout(t *testing.T, c *localcluster.Cluster, env *testenv.Env) rolloutMeasure {
	held := []string{"general", "payments"}
	before := claimNames(t, env, rolloutPools...)
	heldBefore := claimNames(t, env, held...)
	start := time.Now()
	applyFromGit(t, env, fleetAt("v2", ""))
	budgets, annotations := nodePoolBudgets(t, env, "general")
	if !strings.Contains(budgets, `{"nodes":"0","reasons":["Drifted"]}`) || !strings.Contains(annotations["karpgate.io/rollout-guard"], `"by":"rolloutplan/fleet"`) {
		t.Fatalf("the server-side apply from Git dropped the wave hold: budgets %s, record %q", budgets, annotations["karpgate.io/rollout-guard"])
	}

	// Only the canary is replaced; Karpenter itself allows no drift
	// disruption of the held NodePools all along.
	zeroSeen := map[string]bool{}
	checkHeld := func() error {
		if got := claimNames(t, env, held...); len(got) != len(heldBefore) {
			t.Fatalf("a held NodePool's NodeClaims changed before its wave: %v, then %v", heldBefore, got)
		}
		for n := range claimNames(t, env, held...) {
			if _, ok := heldBefore[n]; !ok {
				t.Fatalf("Karpenter launched %s for a held NodePool before its wave", n)
			}
		}
		families, err := scrape(c.Karpenter.KarpenterMetricsURL)
		if err != nil {
			return err
		}
		for k, v := range gauges(families, "karpenter_nodepools_allowed_disruptions") {
			if (k.Pool == "general" || k.Pool == "payments") && strings.EqualFold(k.Reason, "drifted") {
				if v != 0 {
					t.Fatalf("Karpenter allows %v drift disruptions of held NodePool %s", v, k.Pool)
				}
				zeroSeen[k.Pool] = true
			}
		}
		return nil
	}
	var soaking *v1alpha1.RolloutPlan
	waitFor(t, "the canary is replaced and soaks, the rest held", 5*time.Minute, func() error {
		if err := checkHeld(); err != nil {
			return err
		}
		plan, err := planIs(env, v1alpha1.PhaseSoaking, "canary")
		if err != nil {
			return err
		}
		soaking = plan
		return replaced(env, before, "canary")
	})
	// karpgate goes down during the soak and comes back: the status and
	// the records carry the rollout.
	if err := c.StopServe(); err != nil {
		t.Fatal(err)
	}
	if err := checkHeld(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.RestartServe(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the soak ends and the rest rolls", 5*time.Minute, func() error {
		if time.Now().Before(soaking.Status.Waves[0].SoakEndsAt.Time) {
			return checkHeld()
		}
		_, err := planIs(env, v1alpha1.PhaseRolling, "rest")
		return err
	})
	for _, p := range held {
		if !zeroSeen[p] {
			t.Errorf("Karpenter never exported its Drifted allowance for held NodePool %s", p)
		}
	}
	var done *v1alpha1.RolloutPlan
	waitFor(t, "the rest is replaced and the plan is Ready", 6*time.Minute, func() error {
		plan, err := planIs(env, v1alpha1.PhaseIdle, "canary")
		if err != nil {
			return err
		}
		done = plan
		return replaced(env, before, rolloutPools...)
	})
	if c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonRolloutComplete {
		t.Errorf("the plan after the pass: Ready %+v", c)
	}
	// The first replacement of the second wave, against the canary's soak end.
	var first time.Time
	for name, created := range claimNames(t, env, held...) {
		if _, old := heldBefore[name]; !old && (first.IsZero() || created.Before(first)) {
			first = created
		}
	}
	soakEnd := done.Status.Waves[0].CompletedAt.Time
	return rolloutMeasure{idle: first.Sub(soakEnd), total: done.Status.CompletedAt.Sub(start.Truncate(time.Second))}
}

// karpenterAlone rolls the same change without the plan: every NodePool
// at once, under the same budgets.
func karpenterAlone(t *testing.T, c *localcluster.Cluster, env *testenv.Env) time.Duration {
	env.MustKubectl(nil, "delete", "rolloutplan", "fleet")
	waitFor(t, "the deleted plan's holds are lifted", 2*time.Minute, func() error {
		for _, p := range rolloutPools {
			if _, a := nodePoolBudgets(t, env, p); a["karpgate.io/rollout-guard"] != "" {
				return fmt.Errorf("%s still held", p)
			}
		}
		return nil
	})
	before := claimNames(t, env, rolloutPools...)
	start := time.Now()
	applyFromGit(t, env, fleetAt("v3", ""))
	waitFor(t, "Karpenter alone replaces every NodePool", 6*time.Minute, func() error { return replaced(env, before, rolloutPools...) })
	took := time.Since(start)
	for _, p := range rolloutPools {
		waitLaunched(t, c, env, p, 1)
	}
	return took
}

// failingCanary: a change whose new canary nodes never become Ready stops
// the plan after the canary; the second wave is never replaced.
func failingCanary(t *testing.T, c *localcluster.Cluster, env *testenv.Env) {
	apply(t, env, rolloutPlanYAML("30s"))
	waitFor(t, "the new plan is idle", 2*time.Minute, func() error {
		_, err := planIs(env, v1alpha1.PhaseIdle, "canary")
		return err
	})
	held := claimNames(t, env, "general", "payments")
	applyFromGit(t, env, fleetAt("v4", karpenterstack.FaultNotReady))
	var failed *v1alpha1.RolloutPlan
	waitFor(t, "the canary fails its NodesReady gate", 5*time.Minute, func() error {
		if got := claimNames(t, env, "general", "payments"); !sameKeys(got, held) {
			t.Fatalf("the second wave was touched: %v, then %v", keys(held), keys(got))
		}
		plan, err := planIs(env, v1alpha1.PhaseFailed, "canary")
		failed = plan
		return err
	})
	stalled := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionStalled)
	if stalled == nil || stalled.Status != "True" || stalled.Reason != v1alpha1.ReasonNodesNotReady || !strings.Contains(stalled.Message, "no Ready Node 30s after launch") {
		t.Errorf("Stalled: %+v", stalled)
	}
	families, err := scrape(c.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if v := gaugeValue(families, "karpgate_rolloutplan_gate_failing", map[string]string{"plan": "fleet", "wave": "canary", "gate": "NodesReady"}); v != 1 {
		t.Errorf("karpgate_rolloutplan_gate_failing = %v", v)
	}
	for _, p := range []string{"general", "payments"} {
		if _, a := nodePoolBudgets(t, env, p); !strings.Contains(a["karpgate.io/rollout-guard"], "rolloutplan/fleet") {
			t.Errorf("%s is not held after the canary failed", p)
		}
	}
	if got := claimNames(t, env, "general", "payments"); !sameKeys(got, held) {
		t.Errorf("the second wave was touched: %v, then %v", keys(held), keys(got))
	}
}

// gaugeValue is the value of the gauge series matching, -1 if none.
func gaugeValue(families map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	if f := families[name]; f != nil {
		for _, m := range f.GetMetric() {
			if labelsMatch(m, match) && m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func keys(m map[string]time.Time) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sameKeys(a, b map[string]time.Time) bool {
	return strings.Join(keys(a), ",") == strings.Join(keys(b), ",")
}
