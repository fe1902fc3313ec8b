package guard

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/state"
)

// TestTwoLeadersHoldOnce plays a leader change mid-patch: leader A has read
// the NodePool and is about to patch it when leader B (the new leader, or an
// old one that has not noticed it lost the lease) holds it first. A's patch
// carries the resourceVersion it read, so it is refused; A reads again,
// finds B's hold and adds nothing. The NodePool ends with exactly one guard
// budget, and the user's budget is untouched.
func TestTwoLeadersHoldOnce(t *testing.T) {
	var attempts int
	var conflicted bool
	leaderA := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(nodePool(t, `[{"nodes":"10%"}]`, nil)).
		WithInterceptorFuncs(interceptor.Funcs{
			// leaderB is the same API server without this interceptor.
			Patch: func(ctx context.Context, leaderB client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				attempts++
				if attempts == 1 {
					if m, err := Engage(ctx, leaderB, "default", t0, "leader B saw it first"); err != nil || m == nil {
						t.Fatalf("leader B: marker %v, err %v; want its hold", m, err)
					}
				}
				err := leaderB.Patch(ctx, obj, patch, opts...)
				conflicted = conflicted || apierrors.IsConflict(err)
				return err
			},
		}).Build()

	m, err := Engage(context.Background(), leaderA, "default", t0, "leader A saw it too")
	if err != nil {
		t.Fatal(err)
	}
	if !conflicted || m != nil {
		t.Fatalf("leader A: conflicted=%v marker=%+v; want a conflict, then no second hold", conflicted, m)
	}
	live, err := getNodePool(context.Background(), leaderA, "default")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := budgetsJSON(t, live), `[{"nodes":"10%"},`+userZeroDrift+`]`; got != want {
		t.Errorf("budgets = %s, want one hold after the user's budget: %s", got, want)
	}
	if marker, err := holdrecord.ReadMarker(live.GetAnnotations()); err != nil || marker == nil || marker.Reason != "leader B saw it first" {
		t.Errorf("the record is not leader B's: %+v (%v)", marker, err)
	}
}

// TestReleaseRetriesOnConflict: a resume racing the loop's own write must
// still lift the hold, starting again from the newest NodePool.
func TestReleaseRetriesOnConflict(t *testing.T) {
	np := nodePool(t, `[{"nodes":"10%"}]`, nil)
	if _, err := Hold(np, t0, "stuck"); err != nil {
		t.Fatal(err)
	}
	var attempts int
	var conflicted bool
	c := fake.NewClientBuilder().WithScheme(state.NewScheme()).WithObjects(np).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, other client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				attempts++
				if attempts == 1 {
					// Someone else writes the NodePool in between (a label).
					live, err := getNodePool(ctx, other, "default")
					if err != nil {
						t.Fatal(err)
					}
					changed := live.DeepCopy()
					changed.SetLabels(map[string]string{"team": "infra"})
					if err := other.Patch(ctx, changed, client.MergeFrom(live)); err != nil {
						t.Fatal(err)
					}
				}
				err := other.Patch(ctx, obj, patch, opts...)
				conflicted = conflicted || apierrors.IsConflict(err)
				return err
			},
		}).Build()
	outcome, _, err := Release(context.Background(), c, "default", t0)
	if err != nil || outcome != Removed || !conflicted {
		t.Fatalf("Release: outcome %s, err %v, conflicted %v; want removed after a conflict", outcome, err, conflicted)
	}
	live, err := getNodePool(context.Background(), c, "default")
	if err != nil {
		t.Fatal(err)
	}
	if got := budgetsJSON(t, live); got != `[{"nodes":"10%"}]` || live.GetLabels()["team"] != "infra" {
		t.Errorf("after release: budgets %s labels %v; want the user's budget and the other writer's label", got, live.GetLabels())
	}
}
