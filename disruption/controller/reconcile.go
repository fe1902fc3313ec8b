package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	disruptionevents "github.com/karpgate/karpgate/disruption/events"
	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/disruption/metrics"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
)

type reconciler struct {
	cache     client.Reader
	direct    client.Client
	recorder  events.EventRecorder
	collector *metrics.Collector
	opts      Options

	mu sync.Mutex
	// last is each NodePool's status at its previous reconcile, the base
	// events are computed against.
	last map[string]status.NodePool
}

// Reconcile computes one NodePool's status, publishes it and says when to
// look again: at the next budget window boundary, when a replacement
// NodeClaim reaches the guard's timeout, or a week from now.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	now := r.opts.Clock.Now()
	pool, err := readPool(ctx, r.cache, req.Name)
	if apierrors.IsNotFound(err) {
		r.collector.Delete(req.Name)
		r.mu.Lock()
		delete(r.last, req.Name)
		r.mu.Unlock()
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	reasons, _ := r.opts.judged()
	st := status.Compute(pool, reasons, now)
	r.collector.Set(st)
	r.emit(pool.NodePool, st)
	wake, err := r.runGuard(ctx, pool, st, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: requeueAfter(st, wake, now)}, nil
}

func (r *reconciler) emit(np *state.NodePool, st status.NodePool) {
	r.mu.Lock()
	prev, seen := r.last[np.Name]
	r.last[np.Name] = st
	r.mu.Unlock()
	var base *status.NodePool
	if seen {
		base = &prev
	}
	for _, e := range disruptionevents.Diff(base, st, r.opts.Location()) {
		r.recorder.Eventf(np, nil, e.Type, e.Reason, e.Action, "%s", e.Note)
	}
}

// runGuard holds a rollout whose replacements do not come up, or lifts the
// guard's hold when the guard is turned off. It returns when to look again.
func (r *reconciler) runGuard(ctx context.Context, pool state.Pool, st status.NodePool, now time.Time) (time.Time, error) {
	name := pool.NodePool.Name
	if st.Guard.Problem != "" && st.Guard.Marker == nil {
		return time.Time{}, nil // an unreadable record: the status says so, people decide
	}
	if !r.opts.Guard.Enabled {
		// A freeze is people's to lift, whether the guard is on or off,
		// and a plan's wave hold the plan's.
		if !st.Guard.Marker.Guarded() {
			return time.Time{}, nil
		}
		outcome, _, err := guard.Release(ctx, r.direct, name, now)
		if err == nil {
			log.FromContext(ctx).Info("rollout guard turned off: lifted its hold", "nodepool", name, "outcome", outcome)
		}
		return time.Time{}, err
	}
	if st.Guard.Marker != nil || st.Drift.OldestSince == nil {
		return time.Time{}, nil
	}
	stuck, next := guard.Detect(pool, *st.Drift.OldestSince, now, r.opts.Guard.ReadyTimeout)
	if len(stuck) == 0 {
		return next, nil
	}
	names := make([]string, len(stuck))
	for i, s := range stuck {
		names[i] = s.NodeClaim
	}
	reason := fmt.Sprintf("%d NodeClaim(s) launched during the drift rollout have no Ready Node after %s: %s",
		len(stuck), r.opts.Guard.ReadyTimeout, strings.Join(names, ", "))
	if _, err := guard.Engage(ctx, r.direct, name, now, reason); err != nil {
		return time.Time{}, fmt.Errorf("holding the drift rollout of NodePool %s: %w", name, err)
	}
	log.FromContext(ctx).Info("rollout guard holds drift", "nodepool", name, "reason", reason)
	return time.Time{}, r.freezeClusterIfTripped(ctx, name, now)
}

func requeueAfter(st status.NodePool, wake, now time.Time) time.Duration {
	next := now.Add(status.Horizon)
	if at, _ := st.Earliest(); !at.IsZero() && at.Before(next) {
		next = at
	}
	if !wake.IsZero() && wake.Before(next) {
		next = wake
	}
	// Zero would mean "never"; a boundary already passed means "now".
	return max(next.Sub(now), time.Millisecond)
}

func readPool(ctx context.Context, c client.Reader, name string) (state.Pool, error) {
	np := &state.NodePool{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
		return state.Pool{}, err
	}
	var claims state.NodeClaimList
	if err := c.List(ctx, &claims, client.MatchingFields{indexNodePool: name}, client.UnsafeDisableDeepCopy); err != nil {
		return state.Pool{}, err
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingFields{indexNodePool: name}, client.UnsafeDisableDeepCopy); err != nil {
		return state.Pool{}, err
	}
	pool := state.Pool{NodePool: np, NodeClaims: pointers(claims.Items), Nodes: pointers(nodes.Items), NodeClasses: map[string]*state.EC2NodeClass{}}
	// The pods of drifted nodes say whether the rollout can replace them.
	drifted := state.DriftedNodeNames(pool.NodeClaims, pool.Nodes)
	var err error
	if pool.Pods, err = state.PodsOn(ctx, c, drifted); err != nil {
		return state.Pool{}, err
	}
	if len(drifted) > 0 {
		var pdbs state.PodDisruptionBudgetList
		if err := c.List(ctx, &pdbs, client.UnsafeDisableDeepCopy); err != nil {
			return state.Pool{}, err
		}
		pool.PDBs = state.GroupPDBs(pointers(pdbs.Items))
	}
	for _, className := range pool.NodeClassNames() {
		class := &state.EC2NodeClass{}
		err := c.Get(ctx, client.ObjectKey{Name: className}, class)
		switch {
		case err == nil:
			pool.NodeClasses[className] = class
		case !apierrors.IsNotFound(err):
			return state.Pool{}, err
		}
	}
	return pool, nil
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
