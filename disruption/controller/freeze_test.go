package controller

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// TestFreezeCountsHoldsOnTheAPIServer holds NodePools on the API server
// while the informer cache still shows none held, as when the guard holds
// two NodePools moments apart. Holding g2 must trip the freeze of
// --rollout-guard-freeze-after=2 exactly when another hold is live: the
// holds are counted from the API server, not the cache.
func TestFreezeCountsHoldsOnTheAPIServer(t *testing.T) {
	// decoy carries a guard record of a budget the guard never adds, which
	// holds no drift rollout and must not count.
	decoy := pool("decoy", map[string]any{"nodes": "50%"}, map[string]any{"nodes": "0"})
	decoy.Annotations = map[string]string{karpenter.RolloutGuardAnnotation: `{"budget":{"nodes":"0"},"index":1,"since":"2026-01-05T08:00:00Z","reason":"not the guard's"}`}
	// stale carries a record of the guard's budget, which is gone.
	stale := pool("stale", map[string]any{"nodes": "50%"})
	stale.Annotations = map[string]string{karpenter.RolloutGuardAnnotation: `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"2026-01-05T08:00:00Z","reason":"gone"}`}
	tests := []struct {
		name       string
		liveHolds  []string
		others     []*state.NodePool
		wantFrozen bool
	}{
		{"g1 held on the API server, not yet in the cache", []string{"g1", "g2"}, nil, true},
		{"g2 alone held", []string{"g2"}, nil, false},
		{"g2 held beside records that hold nothing", []string{"g2"}, []*state.NodePool{decoy, stale}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			objects := func() []client.Object {
				out := []client.Object{pool("g1", map[string]any{"nodes": "50%"}), pool("g2", map[string]any{"nodes": "50%"}), pool("bystander", map[string]any{"nodes": "10%"})}
				for _, np := range tt.others {
					out = append(out, np.DeepCopy())
				}
				return out
			}
			stale := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(objects()...).Build()
			live := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(objects()...).Build()
			r, _, clk := newReconciler(t, Options{Guard: GuardOptions{Enabled: true, FreezeAfter: 2}})
			r.cache, r.direct = stale, live
			now := clk.Now()
			for _, name := range tt.liveHolds {
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
			if err != nil {
				t.Fatal(err)
			}
			if frozen := m != nil && m.Frozen(); frozen != tt.wantFrozen {
				t.Fatalf("bystander frozen: %v (marker %+v), want %v", frozen, m, tt.wantFrozen)
			}
		})
	}
}
