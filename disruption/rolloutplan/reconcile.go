package rolloutplan

import (
	"context"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/rolloutplan/membership"
	"github.com/karpgate/karpgate/disruption/rolloutplan/progress"
	"github.com/karpgate/karpgate/disruption/state"
)

type reconciler struct {
	cache    client.Reader
	direct   client.Client
	recorder events.EventRecorder
	opts     Options
	metrics  *collector
}

// Reconcile steps one plan: observe, decide, hold and release, write the
// status, record the Events, and say when to look again.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	now := r.opts.Clock.Now()
	var plans v1alpha1.RolloutPlanList
	if err := r.cache.List(ctx, &plans); err != nil {
		return reconcile.Result{}, err
	}
	snap, err := r.read(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan := findPlan(plans.Items, req.Name)
	if plan == nil {
		r.metrics.delete(req.Name)
		// The plan is gone: its holds go with it.
		return reconcile.Result{}, r.releaseLeft(ctx, req.Name, snap, nil, now)
	}
	in, err := r.observe(ctx, plan, plans.Items, snap, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	out := progress.Step(in)
	if err := r.applyHolds(ctx, plan, in, out, now); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.releaseLeft(ctx, plan.Name, snap, in.NodePools, now); err != nil {
		return reconcile.Result{}, err
	}
	if !reflect.DeepEqual(plan.Status, out.Status) {
		patched := plan.DeepCopy()
		patched.Status = out.Status
		if err := r.direct.Status().Patch(ctx, patched, client.MergeFrom(plan)); err != nil {
			if apierrors.IsNotFound(err) {
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, err
		}
	}
	r.record(plan, in, out.Events)
	r.metrics.set(plan.Name, out.Status)
	return reconcile.Result{RequeueAfter: r.requeueAfter(out, now)}, nil
}

// requeueAfter is when to step the plan again with nothing changed: at its
// wake (a soak's end) and, while it rolls or soaks, at least every Resync.
func (r *reconciler) requeueAfter(out progress.Output, now time.Time) time.Duration {
	var next time.Time
	switch out.Status.Phase {
	case v1alpha1.PhaseRolling, v1alpha1.PhaseSoaking:
		next = now.Add(r.opts.Resync)
	}
	if !out.Wake.IsZero() && (next.IsZero() || out.Wake.Before(next)) {
		next = out.Wake
	}
	if next.IsZero() {
		return 0
	}
	return max(next.Sub(now), time.Millisecond)
}

func findPlan(plans []v1alpha1.RolloutPlan, name string) *v1alpha1.RolloutPlan {
	for i := range plans {
		if plans[i].Name == name {
			return &plans[i]
		}
	}
	return nil
}

// read takes the NodePools, NodeClaims and Nodes from the loop's cache.
func (r *reconciler) read(ctx context.Context) (state.Snapshot, error) {
	var s state.Snapshot
	var pools state.NodePoolList
	if err := r.cache.List(ctx, &pools); err != nil {
		return s, err
	}
	var claims state.NodeClaimList
	if err := r.cache.List(ctx, &claims); err != nil {
		return s, err
	}
	var nodes corev1.NodeList
	if err := r.cache.List(ctx, &nodes); err != nil {
		return s, err
	}
	s.NodePools, s.NodeClaims, s.Nodes = pointers(pools.Items), pointers(claims.Items), pointers(nodes.Items)
	return s, nil
}

// observe builds Step's input: the plan's waves without the NodePools an
// older plan has, and what each of its NodePools shows, with the pods of
// the current wave's new nodes.
func (r *reconciler) observe(ctx context.Context, plan *v1alpha1.RolloutPlan, plans []v1alpha1.RolloutPlan, snap state.Snapshot, now time.Time) (progress.Input, error) {
	pools := make([]membership.NodePool, len(snap.NodePools))
	for i, np := range snap.NodePools {
		pools[i] = membership.NodePool{Name: np.Name, Labels: np.Labels}
	}
	owners := membership.Owners(planRefs(plans), pools)
	waves, _ := membership.Assign(&plan.Spec, pools) // a bad selector selects nothing; admission names it
	taken := map[string]string{}
	var conflicts []string
	for _, name := range waves.All() {
		if o := owners[name]; o != plan.Name {
			taken[name], conflicts = o, append(conflicts, name)
		}
	}
	waves = waves.Without(taken)
	in := progress.Input{Plan: plan, Waves: waves, Conflicts: conflicts, NodePools: map[string]progress.NodePool{}, Now: now}
	since := waveStart(plan)
	for _, p := range snap.Pools() {
		if waves.WaveOf(p.NodePool.Name) < 0 {
			continue
		}
		if !since.IsZero() {
			var err error
			if p.Pods, err = state.PodsOn(ctx, r.cache, newNodes(p, since)); err != nil {
				return in, err
			}
		}
		in.NodePools[p.NodePool.Name] = progress.Observe(p, plan)
	}
	return in, nil
}

// waveStart is when the plan's current wave started; zero when none rolls.
func waveStart(plan *v1alpha1.RolloutPlan) time.Time {
	for _, w := range plan.Status.Waves {
		if w.Name == plan.Status.CurrentWave && w.StartedAt != nil && (w.Phase == v1alpha1.WaveRolling || w.Phase == v1alpha1.WaveSoaking) {
			return w.StartedAt.Time
		}
	}
	return time.Time{}
}

// newNodes names the nodes of the pool's NodeClaims created since t.
func newNodes(p state.Pool, since time.Time) []string {
	var out []string
	for _, nc := range p.NodeClaims {
		if !nc.CreationTimestamp.Time.Before(since.Truncate(time.Second)) && nc.Status.NodeName != "" {
			out = append(out, nc.Status.NodeName)
		}
	}
	return out
}

func planRefs(plans []v1alpha1.RolloutPlan) []membership.Plan {
	out := make([]membership.Plan, len(plans))
	for i := range plans {
		out[i] = membership.Plan{Name: plans[i].Name, Created: plans[i].CreationTimestamp.Time, Spec: &plans[i].Spec}
	}
	return out
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
