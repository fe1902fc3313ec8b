package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/test/wait"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies/policywatch"
	"github.com/karpgate/karpgate/test/testenv"
)

// Monday 7 January 2030, a minute before business hours.
var beforeNine = time.Date(2030, 1, 7, 8, 59, 0, 0, time.UTC)

// TestDisruptionLoop runs the loop against a real API server with the
// Karpenter v1.15.1 CRDs and objects written as Karpenter writes them.
func TestDisruptionLoop(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // the managers' logs would drown the test's output
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	createWithStatus(t, env.Client, readObjects(t, "disruption", "cluster.yaml"))

	t.Run("leader computes, publishes and requeues at window edges; follower only serves status", func(t *testing.T) {
		testLeaderAndFollower(t, env)
	})
	t.Run("rollout guard holds and lifts only its own budget", func(t *testing.T) {
		testRolloutGuard(t, env)
	})
}

func testLeaderAndFollower(t *testing.T, env *testenv.Env) {
	// A lease held by someone else: the follower never leads.
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "karpgate-e2e-follower", Namespace: "default"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("someone-else"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	if err := env.Client.Create(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	// The loop judges by v1.14 here, as karpgate.yaml's karpenterVersion
	// would choose it: this test is about leadership and window edges, and
	// its expected series predate the Unhealthy lane, which
	// disruption/metrics and the Karpenter suite check.
	v114 := func() release.Judged {
		r, exact, _ := release.Lookup("v1.14")
		return release.ForRelease(r, exact, policywatch.ConfigSource)
	}
	followerRegistry := prometheus.NewRegistry()
	follower := startLoop(t, env, manager.Options{LeaderElection: true, LeaderElectionID: lease.Name, LeaderElectionNamespace: "default"},
		controller.Options{Name: "karpgate-follower", Registerer: followerRegistry, Judged: v114})

	clk := clocktesting.NewFakeClock(beforeNine)
	// The default name, and a registry of the test's own: a collector left
	// in controller-runtime's process-wide registry would also be served
	// by every later test's karpgate serve, whose /metrics gathers that
	// registry beside its own loop's, and fail there as a duplicate.
	leaderRegistry := prometheus.NewRegistry()
	leader := startLoop(t, env, manager.Options{}, controller.Options{Clock: clk, Judged: v114, Registerer: leaderRegistry})

	metric := func(want string, names ...string) func() error {
		return func() error {
			return testutil.GatherAndCompare(leaderRegistry, strings.NewReader(want), names...)
		}
	}
	wait.ForNoError(t, "metrics at 08:59", metric(`
# HELP karpgate_nodepool_allowed_disruptions Voluntary disruptions a reason allows now: the binding budget minus the nodes using it up; +Inf when no active budget covers the reason, 0 when invalid budgets block every reason. One series per reason of the Karpenter release judged (Unhealthy, node repair, from v1.15).
# TYPE karpgate_nodepool_allowed_disruptions gauge
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Drifted"} 0
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Empty"} 0
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Underutilized"} 0
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Drifted"} 1
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Empty"} 1
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Underutilized"} 1
karpgate_nodepool_allowed_disruptions{nodepool="open",reason="Drifted"} +Inf
karpgate_nodepool_allowed_disruptions{nodepool="open",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions{nodepool="open",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions{nodepool="steady",reason="Drifted"} 0
karpgate_nodepool_allowed_disruptions{nodepool="steady",reason="Empty"} 0
karpgate_nodepool_allowed_disruptions{nodepool="steady",reason="Underutilized"} 0
# HELP karpgate_nodepool_nodes Nodes the NodePool's budgets are computed from: initialized, with a NodeClaim whose instance is not terminating.
# TYPE karpgate_nodepool_nodes gauge
karpgate_nodepool_nodes{nodepool="broken"} 1
karpgate_nodepool_nodes{nodepool="business"} 5
karpgate_nodepool_nodes{nodepool="open"} 0
karpgate_nodepool_nodes{nodepool="steady"} 3
# HELP karpgate_nodepool_disrupting_nodes Counted nodes already disrupting (NotReady, deleting, rebooting or tainted karpenter.sh/disrupted); they reduce the allowance of every reason but Unhealthy, which only the ones not merely NotReady reduce.
# TYPE karpgate_nodepool_disrupting_nodes gauge
karpgate_nodepool_disrupting_nodes{nodepool="broken"} 0
karpgate_nodepool_disrupting_nodes{nodepool="business"} 0
karpgate_nodepool_disrupting_nodes{nodepool="open"} 0
karpgate_nodepool_disrupting_nodes{nodepool="steady"} 2
# HELP karpgate_nodepool_invalid_budgets Budgets that make Karpenter allow zero voluntary disruptions of the NodePool for every reason.
# TYPE karpgate_nodepool_invalid_budgets gauge
karpgate_nodepool_invalid_budgets{nodepool="broken"} 1
karpgate_nodepool_invalid_budgets{nodepool="business"} 0
karpgate_nodepool_invalid_budgets{nodepool="open"} 0
karpgate_nodepool_invalid_budgets{nodepool="steady"} 0
# HELP karpgate_nodepool_drifted_nodeclaims NodeClaims whose Drifted condition is True, by the condition's reason.
# TYPE karpgate_nodepool_drifted_nodeclaims gauge
karpgate_nodepool_drifted_nodeclaims{nodepool="business",reason="AMIDrift"} 2
# HELP karpgate_nodepool_oldest_drift_age_seconds Seconds since the longest-drifted NodeClaim became Drifted; absent when none is drifted.
# TYPE karpgate_nodepool_oldest_drift_age_seconds gauge
karpgate_nodepool_oldest_drift_age_seconds{nodepool="business"} 7200
# HELP karpgate_nodepool_will_drift_nodeclaims NodeClaims whose image is no longer the newest compatible AMI of their EC2NodeClass, not yet marked Drifted.
# TYPE karpgate_nodepool_will_drift_nodeclaims gauge
karpgate_nodepool_will_drift_nodeclaims{nodepool="broken"} 0
karpgate_nodepool_will_drift_nodeclaims{nodepool="business"} 1
karpgate_nodepool_will_drift_nodeclaims{nodepool="open"} 0
karpgate_nodepool_will_drift_nodeclaims{nodepool="steady"} 0
# HELP karpgate_nodepool_do_not_disrupt_nodes Counted nodes annotated karpenter.sh/do-not-disrupt=true.
# TYPE karpgate_nodepool_do_not_disrupt_nodes gauge
karpgate_nodepool_do_not_disrupt_nodes{nodepool="broken"} 0
karpgate_nodepool_do_not_disrupt_nodes{nodepool="business"} 1
karpgate_nodepool_do_not_disrupt_nodes{nodepool="open"} 0
karpgate_nodepool_do_not_disrupt_nodes{nodepool="steady"} 0
`, "karpgate_nodepool_allowed_disruptions", "karpgate_nodepool_nodes", "karpgate_nodepool_disrupting_nodes", "karpgate_nodepool_invalid_budgets",
		"karpgate_nodepool_drifted_nodeclaims", "karpgate_nodepool_oldest_drift_age_seconds", "karpgate_nodepool_will_drift_nodeclaims",
		"karpgate_nodepool_do_not_disrupt_nodes"))

	// At first sight only the invalid budget is worth an event.
	wait.ForNoError(t, "events at 08:59", func() error {
		return sameEvents([]string{"broken DisruptionBudgetInvalid"}, poolEvents(t, env.Client, controller.DefaultName))
	})
	if note := eventNote(t, env.Client, controller.DefaultName, "broken", "DisruptionBudgetInvalid"); !strings.Contains(note, `use "0 9 * * sat,sun"`) {
		t.Errorf("the invalid-budget event does not name the fix: %q", note)
	}

	rec := httptest.NewRecorder()
	leader.loop.StatusHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("/status = %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	golden(t, rec.Body.Bytes(), "disruption", "status.golden.json")

	var out, errOut bytes.Buffer
	if code := app.Execute([]string{"status", "--kubeconfig", env.KubeconfigPath, "--at", beforeNine.Format(time.RFC3339)}, nil, &out, &errOut); code != 0 {
		t.Fatalf("karpgate status exited %d: %s", code, errOut.String())
	}
	golden(t, []byte(hideAddresses(out.String())), "disruption", "status.golden.txt")

	// 09:00: the business-hours budget closes Drifted; the loop requeued for
	// exactly this instant and the fake clock's step fires that requeue.
	clk.Step(time.Minute)
	wait.ForNoError(t, "metrics at 09:00", metric(`
# HELP karpgate_nodepool_allowed_disruptions Voluntary disruptions a reason allows now: the binding budget minus the nodes using it up; +Inf when no active budget covers the reason, 0 when invalid budgets block every reason. One series per reason of the Karpenter release judged (Unhealthy, node repair, from v1.15).
# TYPE karpgate_nodepool_allowed_disruptions gauge
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Drifted"} 0
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Empty"} 0
karpgate_nodepool_allowed_disruptions{nodepool="broken",reason="Underutilized"} 0
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Drifted"} 0
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Empty"} 1
karpgate_nodepool_allowed_disruptions{nodepool="business",reason="Underutilized"} 1
karpgate_nodepool_allowed_disruptions{nodepool="open",reason="Drifted"} +Inf
karpgate_nodepool_allowed_disruptions{nodepool="open",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions{nodepool="open",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions{nodepool="steady",reason="Drifted"} 0
karpgate_nodepool_allowed_disruptions{nodepool="steady",reason="Empty"} 0
karpgate_nodepool_allowed_disruptions{nodepool="steady",reason="Underutilized"} 0
# HELP karpgate_nodepool_allowed_disruptions_next_change_seconds Seconds until the reason's allowance next changes as budget windows open or close; +Inf when it does not change within 7 days.
# TYPE karpgate_nodepool_allowed_disruptions_next_change_seconds gauge
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="broken",reason="Drifted"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="broken",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="broken",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="business",reason="Drifted"} 28800
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="business",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="business",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="open",reason="Drifted"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="open",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="open",reason="Underutilized"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="steady",reason="Drifted"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="steady",reason="Empty"} +Inf
karpgate_nodepool_allowed_disruptions_next_change_seconds{nodepool="steady",reason="Underutilized"} +Inf
`, "karpgate_nodepool_allowed_disruptions", "karpgate_nodepool_allowed_disruptions_next_change_seconds"))

	// Drift starts in steady and finishes in business.
	setCondition(t, env.Client, "steady-0", "Drifted", "True", "NodePoolDrifted", beforeNine)
	setCondition(t, env.Client, "business-0", "Drifted", "False", "NotDrifted", beforeNine)
	setCondition(t, env.Client, "business-1", "Drifted", "False", "NotDrifted", beforeNine)
	wait.ForNoError(t, "events after 09:00", func() error {
		return sameEvents([]string{"broken DisruptionBudgetInvalid", "business DisruptionWindowClosed", "business DriftFinished", "steady DriftStarted"},
			poolEvents(t, env.Client, controller.DefaultName))
	})
	if note := eventNote(t, env.Client, controller.DefaultName, "business", "DisruptionWindowClosed"); !strings.Contains(note, "Drifted disruptions no longer allowed") ||
		!strings.Contains(note, "next change of Drifted at 2030-01-07T17:00:00Z") {
		t.Errorf("window event note = %q", note)
	}

	// The follower's cache answers /status, but it never reconciled.
	rec = httptest.NewRecorder()
	follower.loop.StatusHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status?nodepool=business", nil))
	var resp controller.StatusResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != 200 {
		t.Fatalf("follower /status = %d: %s", rec.Code, rec.Body)
	}
	if resp.Leader || len(resp.NodePools) != 1 || resp.NodePools[0].Nodes != 5 {
		t.Errorf("follower /status: leader %v, pools %+v", resp.Leader, resp.NodePools)
	}
	if n := karpgateSeries(t, followerRegistry); n != 0 {
		t.Errorf("the follower exported %d karpgate series; only the leader reconciles", n)
	}
	if got := poolEvents(t, env.Client, "karpgate-follower"); len(got) != 0 {
		t.Errorf("the follower emitted events: %v", got)
	}
	leader.stop()
	follower.stop()
}

// guardedPool: the user's budgets include one identical in value to the
// budget the guard adds. guarded-0 drifted an hour ago; guarded-1 replaced it
// and has no Node.
func guardedPool(now time.Time) []*unstructured.Unstructured {
	doc := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(s), &u.Object); err != nil {
			panic(err)
		}
		return u
	}
	claim := func(name, status string) *unstructured.Unstructured {
		return doc(fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"name":%q,"labels":{"karpenter.sh/nodepool":"guarded"}},
			"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]},"status":%s}`, name, status))
	}
	return []*unstructured.Unstructured{
		doc(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"guarded"},"spec":{"disruption":{"budgets":[{"nodes":"50%"},{"nodes":"0","reasons":["Drifted"]}]},
			"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]}}}}`),
		claim("guarded-0", fmt.Sprintf(`{"providerID":"aws:///us-east-1a/i-guarded-0","imageID":"ami-old","conditions":[{"type":"Drifted","status":"True","reason":"AMIDrift","message":"","lastTransitionTime":%q}]}`,
			now.Add(-time.Hour).Format(time.RFC3339))),
		doc(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-guarded-0","labels":{"karpenter.sh/nodepool":"guarded","karpenter.sh/initialized":"true"}},
			"spec":{"providerID":"aws:///us-east-1a/i-guarded-0"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"","lastHeartbeatTime":null,"lastTransitionTime":null}]}}`),
		claim("guarded-1", `{"conditions":[]}`),
	}
}

func budgetsOf(t *testing.T, c client.Client, name string) (string, map[string]string) {
	t.Helper()
	np := &unstructured.Unstructured{}
	np.SetAPIVersion("karpenter.sh/v1")
	np.SetKind("NodePool")
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	b, _, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "disruption", "budgets")
	out, _ := json.Marshal(b)
	return string(out), np.GetAnnotations()
}

func testRolloutGuard(t *testing.T, env *testenv.Env) {
	const (
		user = `[{"nodes":"50%"},{"nodes":"0","reasons":["Drifted"]}]`
		held = `[{"nodes":"50%"},{"nodes":"0","reasons":["Drifted"]},{"nodes":"0","reasons":["Drifted"]}]`
	)
	start := time.Now().UTC().Truncate(time.Second)
	createWithStatus(t, env.Client, guardedPool(start))
	clk := clocktesting.NewFakeClock(start)
	registry := prometheus.NewRegistry()
	guardLoop := startLoop(t, env, manager.Options{}, controller.Options{Name: "karpgate-guard", Clock: clk, Registerer: registry,
		Guard: controller.GuardOptions{Enabled: true, ReadyTimeout: 10 * time.Minute}})
	heldMetric := func(v int) func() error {
		return func() error {
			return testutil.GatherAndCompare(registry, strings.NewReader(fmt.Sprintf(`
# HELP karpgate_nodepool_rollout_guard_held 1 while karpgate's rollout guard holds the NodePool's drift rollout.
# TYPE karpgate_nodepool_rollout_guard_held gauge
karpgate_nodepool_rollout_guard_held{nodepool="broken"} 0
karpgate_nodepool_rollout_guard_held{nodepool="business"} 0
karpgate_nodepool_rollout_guard_held{nodepool="guarded"} %d
karpgate_nodepool_rollout_guard_held{nodepool="open"} 0
karpgate_nodepool_rollout_guard_held{nodepool="steady"} 0
`, v)), "karpgate_nodepool_rollout_guard_held")
		}
	}
	wait.ForNoError(t, "first reconcile, within the timeout", heldMetric(0))
	if got, _ := budgetsOf(t, env.Client, "guarded"); got != user {
		t.Fatalf("the guard acted before the timeout: budgets %s", got)
	}

	clk.Step(11 * time.Minute) // guarded-1 has had no Ready Node for 10 minutes
	wait.ForNoError(t, "the guard holds", heldMetric(1))
	got, annotations := budgetsOf(t, env.Client, "guarded")
	if got != held || !strings.Contains(annotations["karpgate.io/rollout-guard"], `"index":2`) {
		t.Fatalf("after holding: budgets %s, annotations %v", got, annotations)
	}
	wait.ForNoError(t, "hold event", func() error {
		return sameEvents([]string{"guarded RolloutGuardHeld"}, eventsAbout("guarded", poolEvents(t, env.Client, "karpgate-guard")))
	})
	if note := eventNote(t, env.Client, "karpgate-guard", "guarded", "RolloutGuardHeld"); !strings.Contains(note, "guarded-1") || !strings.Contains(note, "karpgate resume guarded") {
		t.Errorf("hold event note = %q", note)
	}

	var out, errOut bytes.Buffer
	if code := app.Execute([]string{"resume", "guarded", "--kubeconfig", env.KubeconfigPath}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "removed karpgate's budget spec.disruption.budgets[2]") {
		t.Fatalf("karpgate resume exited %d: %s%s", code, out.String(), errOut.String())
	}
	got, annotations = budgetsOf(t, env.Client, "guarded")
	if _, stillHeld := annotations["karpgate.io/rollout-guard"]; got != user || stillHeld || annotations["karpgate.io/rollout-guard-resumed"] == "" {
		t.Fatalf("after resume: budgets %s (want the user's identical budget kept: %s), annotations %v", got, user, annotations)
	}
	wait.ForNoError(t, "lifted", heldMetric(0))
	wait.ForNoError(t, "lift event", func() error {
		return sameEvents([]string{"guarded RolloutGuardHeld", "guarded RolloutGuardLifted"}, eventsAbout("guarded", poolEvents(t, env.Client, "karpgate-guard")))
	})
	out.Reset()
	if code := app.Execute([]string{"resume", "guarded", "--kubeconfig", env.KubeconfigPath}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "does not hold it; nothing changed") {
		t.Errorf("second resume exited %d: %s", code, out.String())
	}

	// A replacement launched after the resume trips the guard again; turning
	// the guard off in configuration lifts that hold. Launch times have whole
	// seconds, so the new NodeClaim must come a second after the resume.
	resumed, err := time.Parse(time.RFC3339, annotations["karpgate.io/rollout-guard-resumed"])
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the clock to pass the resume's second", func() bool { return time.Now().After(resumed.Add(time.Second)) })
	next := guardedPool(start)[3]
	next.SetName("guarded-2")
	createWithStatus(t, env.Client, []*unstructured.Unstructured{next})
	wait.ForNoError(t, "held again", heldMetric(1))
	guardLoop.stop()
	startLoop(t, env, manager.Options{}, controller.Options{Name: "karpgate-guard-off", Registerer: prometheus.NewRegistry()})
	wait.ForNoError(t, "lifted by configuration", func() error {
		got, annotations := budgetsOf(t, env.Client, "guarded")
		if _, stillHeld := annotations["karpgate.io/rollout-guard"]; got != user || stillHeld {
			return fmt.Errorf("budgets %s, annotations %v", got, annotations)
		}
		return nil
	})
}
