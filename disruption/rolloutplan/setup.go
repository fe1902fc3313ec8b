package rolloutplan

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/promreg"
)

// Served reports whether the cluster serves the RolloutPlan kind (its CRD
// is installed).
func Served(mapper meta.RESTMapper) (bool, error) {
	_, err := mapper.RESTMapping(v1alpha1.GroupVersion.WithKind("RolloutPlan").GroupKind(), v1alpha1.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// Setup adds the controller to mgr (the disruption loop's manager, whose
// controllers run on the leader only), on the loop's cache cl; holds and
// status go through direct.
func Setup(mgr manager.Manager, cl cluster.Cluster, direct client.Client, opts Options) error {
	opts = opts.withDefaults()
	if _, err := cl.GetCache().GetInformer(context.Background(), &v1alpha1.RolloutPlan{}); err != nil {
		return fmt.Errorf("watching RolloutPlans: %w", err)
	}
	collector := newCollector()
	if err := promreg.Replace(opts.Registerer, collector); err != nil {
		return fmt.Errorf("registering the rollout plan metrics: %w", err)
	}
	r := &reconciler{cache: cl.GetClient(), direct: direct, recorder: cl.GetEventRecorder(opts.Name), opts: opts, metrics: collector}
	all := allPlans(cl.GetClient())
	return builder.ControllerManagedBy(mgr).
		Named(opts.Name).
		WithOptions(controller.QueueOptions(opts.Clock)).
		// Any plan change can move NodePools between plans; a deleted plan
		// is no longer listed, so it is asked for by name (its holds go).
		WatchesRawSource(source.Kind(cl.GetCache(), &v1alpha1.RolloutPlan{}, handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, p *v1alpha1.RolloutPlan) []reconcile.Request {
			return append(all(ctx), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
		}))).
		// A NodePool also wakes the plan its record names, which may be
		// gone (deleted while karpgate was down): that releases the hold.
		WatchesRawSource(source.Kind(cl.GetCache(), &state.NodePool{}, handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, np *state.NodePool) []reconcile.Request {
			out := all(ctx)
			if m, err := holdrecord.ReadMarker(np.Annotations); err == nil && m.RolloutPlan() != "" {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: m.RolloutPlan()}})
			}
			return out
		}), controller.Changed[*state.NodePool]())).
		WatchesRawSource(source.Kind(cl.GetCache(), &state.NodeClaim{}, mapAll[*state.NodeClaim](all), controller.Changed[*state.NodeClaim]())).
		WatchesRawSource(source.Kind(cl.GetCache(), &corev1.Node{}, mapAll[*corev1.Node](all), controller.Changed[*corev1.Node]())).
		Complete(r)
}

// allPlans lists every plan as a request: there are few plans, and which
// of them a NodePool, NodeClaim or Node matters to depends on the others.
func allPlans(c client.Reader) func(context.Context) []reconcile.Request {
	return func(ctx context.Context) []reconcile.Request {
		var plans v1alpha1.RolloutPlanList
		if err := c.List(ctx, &plans); err != nil {
			return nil
		}
		out := make([]reconcile.Request, len(plans.Items))
		for i, p := range plans.Items {
			out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)}
		}
		return out
	}
}

func mapAll[T client.Object](all func(context.Context) []reconcile.Request) handler.TypedEventHandler[T, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ T) []reconcile.Request { return all(ctx) })
}
