package controller

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Cache indexes.
const (
	indexNodePool  = "karpgate.nodepool"  // NodeClaims and Nodes by pool label
	indexNodeClass = "karpgate.nodeclass" // NodePools and NodeClaims by EC2NodeClass name
)

func addIndexes(ctx context.Context, idx client.FieldIndexer) error {
	byPool := func(o client.Object) []string {
		if p := o.GetLabels()[karpenter.NodePoolLabel]; p != "" {
			return []string{p}
		}
		return nil
	}
	if err := idx.IndexField(ctx, &state.NodeClaim{}, indexNodePool, byPool); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &corev1.Node{}, indexNodePool, byPool); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &state.NodeClaim{}, indexNodeClass, func(o client.Object) []string {
		return classIndex(o.(*state.NodeClaim).Spec.NodeClassRef)
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &state.NodePool{}, indexNodeClass, func(o client.Object) []string {
		return classIndex(o.(*state.NodePool).Spec.Template.Spec.NodeClassRef)
	}); err != nil {
		return err
	}
	// Named as the API server's field, so that state.PodsOn lists a node's
	// pods the same way from the cache and from the API server.
	return idx.IndexField(ctx, &state.Pod{}, state.PodNodeNameField, func(o client.Object) []string {
		if n := o.(*state.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	})
}

func classIndex(ref state.NodeClassRef) []string {
	if state.IsEC2NodeClass(ref) {
		return []string{ref.Name}
	}
	return nil
}

func request(pool string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: pool}}
}

// Changed drops updates that differ only in resourceVersion: after the trims
// most updates (kubelet heartbeats, lastPodEventTime) look like that. Every
// watch on the loop's cache uses it (the rollout plans' too).
func Changed[T client.Object]() predicate.TypedPredicate[T] {
	return predicate.TypedFuncs[T]{UpdateFunc: func(e event.TypedUpdateEvent[T]) bool {
		oldObj, newObj := e.ObjectOld.DeepCopyObject().(T), e.ObjectNew.DeepCopyObject().(T)
		oldObj.SetResourceVersion("")
		newObj.SetResourceVersion("")
		return !reflect.DeepEqual(oldObj, newObj)
	}}
}

func nodePoolSource(cl cluster.Cluster) source.TypedSource[reconcile.Request] {
	return source.Kind(cl.GetCache(), &state.NodePool{},
		handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, np *state.NodePool) []reconcile.Request {
			return []reconcile.Request{request(np.Name)}
		}), Changed[*state.NodePool]())
}

func nodeClaimSource(cl cluster.Cluster) source.TypedSource[reconcile.Request] {
	return source.Kind(cl.GetCache(), &state.NodeClaim{},
		handler.TypedEnqueueRequestsFromMapFunc(byPoolLabel[*state.NodeClaim]), Changed[*state.NodeClaim]())
}

func nodeSource(cl cluster.Cluster) source.TypedSource[reconcile.Request] {
	return source.Kind(cl.GetCache(), &corev1.Node{},
		handler.TypedEnqueueRequestsFromMapFunc(byPoolLabel[*corev1.Node]), Changed[*corev1.Node]())
}

func byPoolLabel[T client.Object](_ context.Context, o T) []reconcile.Request {
	if p := o.GetLabels()[karpenter.NodePoolLabel]; p != "" {
		return []reconcile.Request{request(p)}
	}
	return nil
}

// podSource wakes the NodePool of the pod's node: a pod that starts or stops
// blocking eviction changes how many drifted nodes are held by their pods.
func podSource(cl cluster.Cluster) source.TypedSource[reconcile.Request] {
	reader := cl.GetClient()
	return source.Kind(cl.GetCache(), &state.Pod{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, p *state.Pod) []reconcile.Request {
			return poolsOfNodes(ctx, reader, p.Spec.NodeName)
		}), Changed[*state.Pod]())
}

// pdbSource wakes the NodePools of the nodes running pods the budget
// selects: its disruptionsAllowed reaching or leaving zero changes them.
func pdbSource(cl cluster.Cluster) source.TypedSource[reconcile.Request] {
	reader := cl.GetClient()
	return source.Kind(cl.GetCache(), &state.PodDisruptionBudget{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, b *state.PodDisruptionBudget) []reconcile.Request {
			sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
			if err != nil || b.Spec.Selector == nil {
				return nil
			}
			var pods state.PodList
			if err := reader.List(ctx, &pods, client.InNamespace(b.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
				return nil
			}
			nodes := make([]string, 0, len(pods.Items))
			for _, p := range pods.Items {
				nodes = append(nodes, p.Spec.NodeName)
			}
			return poolsOfNodes(ctx, reader, nodes...)
		}), Changed[*state.PodDisruptionBudget]())
}

// poolsOfNodes maps node names to reconcile requests for their NodePools.
func poolsOfNodes(ctx context.Context, reader client.Reader, names ...string) []reconcile.Request {
	pools := map[string]bool{}
	for _, name := range names {
		if name == "" {
			continue
		}
		node := &corev1.Node{}
		if err := reader.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			continue
		}
		if p := node.Labels[karpenter.NodePoolLabel]; p != "" {
			pools[p] = true
		}
	}
	return requests(pools)
}

// nodeClassSource wakes every NodePool whose template or NodeClaims use the
// EC2NodeClass: a new AMI in status.amis changes what will drift.
func nodeClassSource(cl cluster.Cluster) source.TypedSource[reconcile.Request] {
	reader := cl.GetClient()
	return source.Kind(cl.GetCache(), &state.EC2NodeClass{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, c *state.EC2NodeClass) []reconcile.Request {
			pools := map[string]bool{}
			var nps state.NodePoolList
			if err := reader.List(ctx, &nps, client.MatchingFields{indexNodeClass: c.Name}); err == nil {
				for _, np := range nps.Items {
					pools[np.Name] = true
				}
			}
			var ncs state.NodeClaimList
			if err := reader.List(ctx, &ncs, client.MatchingFields{indexNodeClass: c.Name}); err == nil {
				for _, nc := range ncs.Items {
					if p := nc.Labels[karpenter.NodePoolLabel]; p != "" {
						pools[p] = true
					}
				}
			}
			return requests(pools)
		}), Changed[*state.EC2NodeClass]())
}

// requests turns a set of NodePool names into one request each.
func requests(pools map[string]bool) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(pools))
	for p := range pools {
		out = append(out, request(p))
	}
	return out
}
