package rolloutplan

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/disruption/rolloutplan/progress"
	"github.com/karpgate/karpgate/disruption/state"
)

// Events on the NodePools the plan holds and releases.
const (
	EventWaveHeld     = "WaveHeld"
	EventWaveReleased = "WaveReleased"
)

// applyHolds places the holds Step wants first, then lifts the ones it
// releases: at no moment is a NodePool released before its wave's others
// are held.
func (r *reconciler) applyHolds(ctx context.Context, plan *v1alpha1.RolloutPlan, in progress.Input, out progress.Output, now time.Time) error {
	names := make([]string, 0, len(out.Holds))
	for n := range out.Holds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if out.Holds[name] != progress.Hold || in.NodePools[name].Holder != progress.HeldByNobody {
			continue
		}
		reason := fmt.Sprintf("rollout plan %s: wave %s rolls first (%s)", plan.Name, out.Status.CurrentWave, out.Status.Phase)
		added, _, err := guard.EngageForPlan(ctx, r.direct, name, now, reason, plan.Name)
		if err != nil {
			return fmt.Errorf("holding NodePool %s for rollout plan %s: %w", name, plan.Name, err)
		}
		if added != nil {
			r.onPool(in, name, corev1.EventTypeNormal, EventWaveHeld, "rollout plan %s holds drift here (spec.disruption.budgets[%d]) while wave %s is %s", plan.Name, added.Index, out.Status.CurrentWave, strings.ToLower(string(out.Status.Phase)))
		}
	}
	for _, name := range names {
		if out.Holds[name] != progress.Release || in.NodePools[name].Holder != progress.HeldByPlan {
			continue
		}
		if err := r.release(ctx, plan.Name, name, in, now); err != nil {
			return err
		}
	}
	return nil
}

func (r *reconciler) release(ctx context.Context, plan, pool string, in progress.Input, now time.Time) error {
	outcome, err := guard.ReleaseForPlan(ctx, r.direct, pool, now, plan)
	if err != nil {
		return fmt.Errorf("releasing NodePool %s for rollout plan %s: %w", pool, plan, err)
	}
	if outcome == guard.Removed || outcome == guard.AlreadyGone {
		r.onPool(in, pool, corev1.EventTypeNormal, EventWaveReleased, "rollout plan %s releases drift here: its wave rolls", plan)
		log.FromContext(ctx).Info("rollout plan released a NodePool", "plan", plan, "nodepool", pool, "outcome", outcome)
	}
	return nil
}

// releaseLeft lifts the plan's holds on NodePools that are no longer its
// own (relabelled, taken by an older plan, or the plan is gone).
func (r *reconciler) releaseLeft(ctx context.Context, plan string, snap state.Snapshot, mine map[string]progress.NodePool, now time.Time) error {
	for _, np := range snap.NodePools {
		if _, ok := mine[np.Name]; ok {
			continue
		}
		m, err := holdrecord.ReadMarker(np.Annotations)
		if err != nil || m.RolloutPlan() != plan {
			continue
		}
		in := progress.Input{NodePools: map[string]progress.NodePool{np.Name: {State: state.Pool{NodePool: np}}}}
		if err := r.release(ctx, plan, np.Name, in, now); err != nil {
			return err
		}
	}
	return nil
}
