package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/karpgate/karpgate/disruption/metrics"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/promreg"
)

// Loop is the disruption loop added to a manager.
type Loop struct {
	cluster cluster.Cluster
	// cache and synced are the loop's cache as its endpoints read it:
	// the cluster's cached client, and whether that has synced.
	cache   client.Reader
	synced  func(context.Context) bool
	direct  client.Client
	opts    Options
	elected <-chan struct{}
}

// Setup adds the loop to mgr: its cache to every replica, its controller to
// the leader only. The manager's own scheme and cache are left alone.
func Setup(mgr manager.Manager, opts Options) (*Loop, error) {
	opts = opts.withDefaults()
	cfg := state.RESTConfig(mgr.GetConfig())
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = state.NewScheme()
		o.Logger = mgr.GetLogger().WithName(opts.Name)
		o.Cache = cache.Options{
			DefaultTransform: state.Trim,
			// Only pods bound to a node and still running can block a
			// disruption: the API server filters the rest out of the watch.
			ByObject: map[client.Object]cache.ByObject{&state.Pod{}: {Field: boundActivePods}},
		}
	})
	if err != nil {
		return nil, fmt.Errorf("creating the disruption loop's cache: %w", err)
	}
	if err := requireKinds(cl.GetRESTMapper()); err != nil {
		return nil, err
	}
	// A cluster is added to the manager's cache runnables: it starts on
	// every replica, before any controller, and is waited for.
	if err := mgr.Add(cl); err != nil {
		return nil, err
	}
	if err := addIndexes(context.Background(), cl.GetFieldIndexer()); err != nil {
		return nil, err
	}
	// Informers registered now start with the cache on every replica, so a
	// follower's /status answers from a synced cache too.
	for _, obj := range []client.Object{&state.NodePool{}, &state.NodeClaim{}, &state.EC2NodeClass{}, &corev1.Node{}, &state.Pod{}, &state.PodDisruptionBudget{}} {
		if _, err := cl.GetCache().GetInformer(context.Background(), obj); err != nil {
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	// Guard patches read the NodePool live and write it whole-list, so they
	// must not go through the cache.
	direct, err := client.New(cfg, client.Options{Scheme: cl.GetScheme(), Mapper: cl.GetRESTMapper(), HTTPClient: cl.GetHTTPClient()})
	if err != nil {
		return nil, err
	}
	collector := metrics.NewCollector(opts.Clock)
	if err := promreg.Replace(opts.Registerer, collector); err != nil {
		return nil, fmt.Errorf("registering the disruption metrics: %w", err)
	}
	r := &reconciler{
		cache:     cl.GetClient(),
		direct:    direct,
		recorder:  cl.GetEventRecorder(opts.Name),
		collector: collector,
		opts:      opts,
		last:      map[string]status.NodePool{},
	}
	err = builder.ControllerManagedBy(mgr).
		Named(opts.Name).
		WithOptions(QueueOptions(opts.Clock)).
		WatchesRawSource(nodePoolSource(cl)).
		WatchesRawSource(nodeClaimSource(cl)).
		WatchesRawSource(nodeSource(cl)).
		WatchesRawSource(nodeClassSource(cl)).
		WatchesRawSource(podSource(cl)).
		WatchesRawSource(pdbSource(cl)).
		Complete(r)
	if err != nil {
		return nil, fmt.Errorf("building the disruption controller: %w", err)
	}
	return &Loop{cluster: cl, cache: cl.GetClient(), synced: cl.GetCache().WaitForCacheSync, direct: direct, opts: opts, elected: mgr.Elected()}, nil
}

// Cluster is the loop's cache, which the rollout plans' controller shares
// (its scheme has the RolloutPlan kind).
func (l *Loop) Cluster() cluster.Cluster { return l.cluster }

// Direct is the loop's uncached client, which hold writes go through.
func (l *Loop) Direct() client.Client { return l.direct }

// boundActivePods selects the pods the loop caches.
var boundActivePods = fields.AndSelectors(
	fields.OneTermNotEqualSelector(state.PodNodeNameField, ""),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
)

// requireKinds fails early, and by name, when the cluster does not serve
// Karpenter's v1 kinds: otherwise the controller would wait for caches that
// never sync and bring the whole manager down minutes later.
func requireKinds(mapper meta.RESTMapper) error {
	var missing []string
	for _, gvk := range []schema.GroupVersionKind{
		state.CoreV1.WithKind(karpenter.KindNodePool),
		state.CoreV1.WithKind(karpenter.KindNodeClaim),
		state.AWSV1.WithKind(karpenter.KindEC2NodeClass),
	} {
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if !meta.IsNoMatchError(err) {
				return fmt.Errorf("looking up %s: %w", gvk, err)
			}
			missing = append(missing, gvk.Kind+" ("+gvk.GroupVersion().String()+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the cluster does not serve %s: install Karpenter's v1 CRDs, or turn the disruption loop off", strings.Join(missing, ", "))
	}
	return nil
}

// QueueOptions are the controller options of karpgate's controllers on the
// leader's manager. The queue's clock is the controller's, so requeues at
// window boundaries and soak ends follow an injected clock too. A
// controller set up again in the same process (see register) reuses its
// name; its metrics are replaced, not doubled.
func QueueOptions(clk clock.WithTicker) ctrlcontroller.Options {
	return ctrlcontroller.Options{
		UsePriorityQueue:   ptr.To(false),
		SkipNameValidation: ptr.To(true),
		NewQueue: func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name, Clock: clk})
		},
	}
}
