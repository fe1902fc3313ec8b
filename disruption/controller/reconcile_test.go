package controller

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/disruption/metrics"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// monday0830 is half an hour before a 09:00 UTC budget window opens.
var monday0830 = time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)

// builderIndexer registers the loop's own field indexes on a fake client,
// so Reconcile lists NodeClaims and Nodes exactly as it does from the cache.
type builderIndexer struct{ b *fake.ClientBuilder }

func (i builderIndexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	i.b.WithIndex(obj, field, extract)
	return nil
}

// newReconciler is the loop's reconciler on one fake client (cache and
// direct writes alike) with a fake clock.
func newReconciler(t *testing.T, opts Options, objects ...client.Object) (*reconciler, client.Client, *clocktesting.FakeClock) {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(objects...)
	if err := addIndexes(context.Background(), builderIndexer{b}); err != nil {
		t.Fatal(err)
	}
	c := b.Build()
	clk := clocktesting.NewFakeClock(monday0830)
	opts.Clock = clk
	opts = opts.withDefaults()
	return &reconciler{
		cache: c, direct: c, recorder: events.NewFakeRecorder(100),
		collector: metrics.NewCollector(clk), opts: opts, last: map[string]status.NodePool{},
	}, c, clk
}

func pool(name string, budgets ...any) *state.NodePool {
	np := &state.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Disruption.Budgets = budgets
	np.Spec.Template.Spec.NodeClassRef = state.NodeClassRef{Group: karpenter.AWSGroup, Kind: karpenter.KindEC2NodeClass, Name: "default"}
	return np
}

// claim is a NodeClaim of pool created at created; drifted adds a
// Drifted=True condition from that instant.
func claim(name, pool string, created time.Time, drifted bool) *state.NodeClaim {
	nc := &state.NodeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{karpenter.NodePoolLabel: pool}, CreationTimestamp: metav1.NewTime(created),
	}}
	if drifted {
		nc.Status.Conditions = []state.Condition{{Type: karpenter.ConditionDrifted, Status: "True", Reason: "NodePoolDrifted", LastTransitionTime: metav1.NewTime(created)}}
	}
	return nc
}

func reconcileOnce(t *testing.T, r *reconciler, name string) reconcile.Result {
	t.Helper()
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
	if err != nil {
		t.Fatalf("Reconcile(%s): %v", name, err)
	}
	return res
}

func liveBudgets(t *testing.T, c client.Client, name string) (string, bool) {
	t.Helper()
	np := &unstructured.Unstructured{}
	np.SetGroupVersionKind(state.CoreV1.WithKind(karpenter.KindNodePool))
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	b, _, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "disruption", "budgets")
	out, _ := json.Marshal(b)
	_, held := np.GetAnnotations()[karpenter.RolloutGuardAnnotation]
	return string(out), held
}

// The loop reports the reasons of the release it judges: Karpenter v1.14
// has no Unhealthy lane, and no node repair series.
func TestReconcileFollowsTheReleaseJudged(t *testing.T) {
	v114 := judgedBy(t, "v1.14", "karpgate.yaml karpenterVersion")
	r, _, _ := newReconciler(t, Options{Judged: func() release.Judged { return v114 }}, pool("old", map[string]any{"nodes": "10%"}))
	reconcileOnce(t, r, "old")
	if n := testutil.CollectAndCount(r.collector, "karpgate_nodepool_allowed_disruptions"); n != 3 {
		t.Errorf("judged by v1.14: %d allowed series, want 3", n)
	}
	if n := testutil.CollectAndCount(r.collector, "karpgate_nodepool_unhealthy_nodes"); n != 0 {
		t.Errorf("judged by v1.14: %d unhealthy series, want none", n)
	}
}

func TestReconcileForgetsADeletedNodePool(t *testing.T) {
	r, c, _ := newReconciler(t, Options{}, pool("gone", map[string]any{"nodes": "10%"}))
	reconcileOnce(t, r, "gone")
	if n := testutil.CollectAndCount(r.collector, "karpgate_nodepool_allowed_disruptions"); n != len(budget.Reasons) {
		t.Fatalf("a reconciled NodePool exports one allowance per reason of the newest release, got %d series", n)
	}
	if err := c.Delete(context.Background(), pool("gone")); err != nil {
		t.Fatal(err)
	}
	if res := reconcileOnce(t, r, "gone"); res != (reconcile.Result{}) {
		t.Errorf("a NodePool that is gone needs no requeue, got %+v", res)
	}
	if n := testutil.CollectAndCount(r.collector, "karpgate_nodepool_allowed_disruptions"); n != 0 {
		t.Errorf("a deleted NodePool still exports %d series", n)
	}
	if _, seen := r.last["gone"]; seen {
		t.Error("the event base of a deleted NodePool is kept")
	}
}

func TestReconcileRequeuesAtTheNextWindowEdge(t *testing.T) {
	window := map[string]any{"nodes": "0", "schedule": "0 9 * * *", "duration": "8h"}
	r, _, _ := newReconciler(t, Options{}, pool("business", window))
	if got := reconcileOnce(t, r, "business").RequeueAfter; got != 30*time.Minute {
		t.Errorf("RequeueAfter = %v, want 30m: the window opens at 09:00", got)
	}
	r, _, _ = newReconciler(t, Options{}, pool("steady", map[string]any{"nodes": "10%"}))
	if got := reconcileOnce(t, r, "steady").RequeueAfter; got != status.Horizon {
		t.Errorf("RequeueAfter = %v, want the horizon %v when nothing changes", got, status.Horizon)
	}
}

func TestReconcileHoldsAStuckRolloutAndWakesAtTheGuardDeadline(t *testing.T) {
	guardOn := Options{Guard: GuardOptions{Enabled: true, ReadyTimeout: 15 * time.Minute}}
	drifted := claim("old", "default", monday0830.Add(-time.Hour), true)

	// The replacement is five minutes old: not stuck yet, look again when
	// it reaches the timeout.
	r, c, clk := newReconciler(t, guardOn, pool("default", map[string]any{"nodes": "10%"}), drifted,
		claim("new", "default", monday0830.Add(-5*time.Minute), false))
	if got := reconcileOnce(t, r, "default").RequeueAfter; got != 10*time.Minute {
		t.Errorf("RequeueAfter = %v, want 10m until the replacement reaches the 15m timeout", got)
	}
	if _, held := liveBudgets(t, c, "default"); held {
		t.Fatal("held before the timeout")
	}

	// At the deadline, still without a Ready Node: the guard holds.
	clk.Step(10 * time.Minute)
	reconcileOnce(t, r, "default")
	budgets, held := liveBudgets(t, c, "default")
	if want := `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`; !held || budgets != want {
		t.Errorf("after the timeout: held=%v budgets=%s, want held with %s", held, budgets, want)
	}
}

func TestReconcileWithTheGuardOffLiftsItsHold(t *testing.T) {
	held := pool("default", map[string]any{"nodes": "10%"})
	u, err := toUnstructured(held)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := guard.Hold(u, monday0830.Add(-time.Hour), "stuck"); err != nil {
		t.Fatal(err)
	}
	r, c, _ := newReconciler(t, Options{Guard: GuardOptions{Enabled: false}}, u)
	reconcileOnce(t, r, "default")
	if budgets, stillHeld := liveBudgets(t, c, "default"); stillHeld || budgets != `[{"nodes":"10%"}]` {
		t.Errorf("guard off: held=%v budgets=%s, want the hold lifted and the user's budget kept", stillHeld, budgets)
	}
}

func toUnstructured(np *state.NodePool) (*unstructured.Unstructured, error) {
	np.SetGroupVersionKind(state.CoreV1.WithKind(karpenter.KindNodePool))
	b, err := json.Marshal(np)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(b)
}
