package guard

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Engage holds the NodePool's drift rollout, reading the NodePool live from
// c (never from a cache: the patch must start from the newest version).
// It returns the marker, or nil when karpgate already held the NodePool.
func Engage(ctx context.Context, c client.Client, name string, now time.Time, reason string) (*holdrecord.Marker, error) {
	added, _, err := apply(ctx, c, name, func(np *unstructured.Unstructured) (*holdrecord.Marker, error) { return Hold(np, now, reason) })
	return added, err
}

// FreezeNodePool adds a freeze to the NodePool, live as Engage does. It
// returns the new marker, or the one already there (and nil) when karpgate
// already held the NodePool.
func FreezeNodePool(ctx context.Context, c client.Client, name string, now time.Time, reason string) (added, existing *holdrecord.Marker, err error) {
	return apply(ctx, c, name, func(np *unstructured.Unstructured) (*holdrecord.Marker, error) { return Freeze(np, now, reason) })
}

// FieldManager is the field manager of every hold and release karpgate
// writes, set explicitly: the API server would otherwise take it from the
// client's User-Agent, which is the binary's file name (kubectl-karpgate
// when run as a kubectl plugin), and GitOps settings name it.
const FieldManager = "karpgate"

// apply adds a hold with add unless karpgate already holds the NodePool.
func apply(ctx context.Context, c client.Client, name string, add func(*unstructured.Unstructured) (*holdrecord.Marker, error)) (added, existing *holdrecord.Marker, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		added, existing = nil, nil
		live, err := getNodePool(ctx, c, name)
		if err != nil {
			return err
		}
		if m, err := holdrecord.ReadMarker(live.GetAnnotations()); err != nil || m != nil {
			existing = m
			return err // already held (or a broken record, which Hold would refuse too)
		}
		changed := live.DeepCopy()
		m, err := add(changed)
		if err != nil {
			return err
		}
		if err := c.Patch(ctx, changed, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager)); err != nil {
			return err
		}
		added = m
		return nil
	})
	return added, existing, err
}

// Release lifts the guard from the NodePool; see Lift.
func Release(ctx context.Context, c client.Client, name string, now time.Time) (Outcome, *holdrecord.Marker, error) {
	var (
		outcome Outcome
		marker  *holdrecord.Marker
	)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live, err := getNodePool(ctx, c, name)
		if err != nil {
			return err
		}
		changed := live.DeepCopy()
		outcome, marker, err = Lift(changed, now)
		if err != nil || outcome == NotHeld {
			return err
		}
		return c.Patch(ctx, changed, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
	})
	return outcome, marker, err
}

func getNodePool(ctx context.Context, c client.Client, name string) (*unstructured.Unstructured, error) {
	np := &unstructured.Unstructured{}
	np.SetGroupVersionKind(state.CoreV1.WithKind(karpenter.KindNodePool))
	if err := c.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
		return nil, fmt.Errorf("reading NodePool %s: %w", name, err)
	}
	return np, nil
}
