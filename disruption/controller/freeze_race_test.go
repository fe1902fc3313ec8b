package controller

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/disruption/state"
)

// TestFreezeCountsHoldsTheCacheHasNotSeen holds g1 on the API server while
// the informer cache still shows it unheld, as when the guard holds two
// NodePools moments apart; holding g2 must still trip the freeze of
// --rollout-guard-freeze-after=2, because the holds are counted live.
func TestFreezeCountsHoldsTheCacheHasNotSeen(t *testing.T) {
	ctx := context.Background()
	objects := func() []client.Object {
		return []client.Object{pool("g1", map[string]any{"nodes": "50%"}), pool("g2", map[string]any{"nodes": "50%"}), pool("bystander", map[string]any{"nodes": "10%"})}
	}
	stale := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(objects()...).Build()
	live := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(objects()...).Build()
	r, _, clk := newReconciler(t, Options{Guard: GuardOptions{Enabled: true, FreezeAfter: 2}})
	r.cache, r.direct = stale, live
	now := clk.Now()
	for _, name := range []string{"g1", "g2"} {
		if _, err := guard.Engage(ctx, live, name, now, "replacements not Ready"); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.freezeClusterIfTripped(ctx, "g2", now); err != nil {
		t.Fatal(err)
	}
	var bystander state.NodePool
	if err := live.Get(ctx, client.ObjectKey{Name: "bystander"}, &bystander); err != nil {
		t.Fatal(err)
	}
	m, err := holdrecord.ReadMarker(bystander.Annotations)
	if err != nil || m == nil || !m.Frozen() {
		t.Fatalf("bystander's marker %+v (%v), want the cluster-wide freeze: g1's hold was on the API server, not yet in the cache", m, err)
	}
}
