package conversion

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// v1ExpireAfterDefault is the v1 NodePool CRD's default for
// spec.template.spec.expireAfter. The API server applies it on read, so it
// only matters for a NodePool read without defaulting.
const v1ExpireAfterDefault = "720h"

// ClientNodePools reads NodePools from the cluster as v1: from Cache once
// it has synced, from Reader (the API server itself) before.
type ClientNodePools struct {
	Reader client.Reader
	// Cache, when set, is read instead of Reader once Synced says it holds
	// every NodePool: a review of every NodeClaim of a cluster names every
	// NodePool, and a read of each from the API server at the client's
	// rate took longer than the review may (about 50 NodePools at 5 QPS
	// passed the 8 s timeout, and Karpenter's NodeClaim LIST failed with
	// it).
	Cache  client.Reader
	Synced func() bool
	// Log receives the errors whose text names sockets (a failed dial);
	// the review's message says only that the API server was not reached.
	Log logr.Logger
}

var nodePoolV1GVK = schema.GroupVersionKind{Group: karpenter.CoreGroup, Version: karpenter.V1, Kind: karpenter.KindNodePool}

// ExpireAfter reads the NodePool's spec.template.spec.expireAfter; found is
// false when the NodePool does not exist.
func (c ClientNodePools) ExpireAfter(ctx context.Context, name string) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	reader := c.Reader
	if c.Cache != nil && c.Synced != nil && c.Synced() {
		reader = c.Cache
	}
	np := &unstructured.Unstructured{}
	np.SetGroupVersionKind(nodePoolV1GVK)
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return "", false, err // the API server's own words
		}
		c.Log.Error(err, "reading a NodePool for a conversion", "nodePool", name)
		return "", false, errors.New("the API server could not be reached (karpgate's log has the details)")
	}
	value, found, err := unstructured.NestedString(np.Object, "spec", "template", "spec", "expireAfter")
	if err != nil {
		return "", false, err
	}
	if !found {
		return v1ExpireAfterDefault, true, nil
	}
	return value, true, nil
}

// memo answers each NodePool once per review: a review can hold every
// NodeClaim of a cluster, and they share a handful of NodePools.
type memo struct {
	next    conversion.NodePoolLookup
	mu      sync.Mutex
	answers map[string]memoAnswer
}

type memoAnswer struct {
	value string
	found bool
}

func newMemo(next conversion.NodePoolLookup) conversion.NodePoolLookup {
	if next == nil {
		return nil
	}
	return &memo{next: next, answers: map[string]memoAnswer{}}
}

func (m *memo) ExpireAfter(ctx context.Context, name string) (string, bool, error) {
	m.mu.Lock()
	a, ok := m.answers[name]
	m.mu.Unlock()
	if ok {
		return a.value, a.found, nil
	}
	value, found, err := m.next.ExpireAfter(ctx, name)
	if err != nil {
		return "", false, err // not remembered: the next object may succeed
	}
	m.mu.Lock()
	m.answers[name] = memoAnswer{value, found}
	m.mu.Unlock()
	return value, found, nil
}

// NodePoolCache keeps every NodePool, as v1, trimmed to its name and
// expireAfter, for ClientNodePools. It is a manager runnable of the plain
// kind, not a cache the manager waits for: while NodePools are stored as
// v1beta1, listing them as v1 needs karpgate's own conversion webhook,
// which must be serving first. Until it has synced, lookups go to the API
// server.
//
// It starts only when Want is called, on the first review that converts
// NodePools: before the NodePool CRD converts through karpgate, the API
// server reads a v1beta1 NodePool as v1 by renaming its apiVersion, which
// drops spec.disruption.expireAfter and defaults the v1 field to 720h, and
// an informer that listed then would keep those copies until each NodePool
// changed again. A cache started by a NodePool review lists after the CRD
// converts through karpgate. (A CRD switched away from karpgate and back
// while it runs is not caught: restart karpgate after such a change.)
type NodePoolCache struct {
	cache    cache.Cache
	informer cache.Informer
	wanted   chan struct{}
	want     sync.Once
}

// Want starts the cache (once): the NodePool CRD now converts through
// karpgate. It is the conversion Handler's NodePoolReviewed.
func (n *NodePoolCache) Want() { n.want.Do(func() { close(n.wanted) }) }

// NewNodePoolCache watches NodePools with cfg.
func NewNodePoolCache(cfg *rest.Config) (*NodePoolCache, error) {
	return newNodePoolCache(cfg, cache.Options{})
}

func newNodePoolCache(cfg *rest.Config, opts cache.Options) (*NodePoolCache, error) {
	np := &unstructured.Unstructured{}
	np.SetGroupVersionKind(nodePoolV1GVK)
	opts.ByObject = map[client.Object]cache.ByObject{np: {Transform: trimNodePool}}
	c, err := cache.New(cfg, opts)
	var informer cache.Informer
	if err == nil {
		informer, err = c.GetInformer(context.Background(), np, cache.BlockUntilSynced(false))
	}
	if meta.IsNoMatchError(err) {
		// Karpenter's CRDs are not installed yet: the webhooks still
		// serve, and lookups read the API server until a restart.
		return &NodePoolCache{wanted: make(chan struct{})}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("a cache of NodePools for conversion: %w", err)
	}
	return &NodePoolCache{cache: c, informer: informer, wanted: make(chan struct{})}, nil
}

// Start runs the cache from the first Want until ctx ends.
func (n *NodePoolCache) Start(ctx context.Context) error {
	if n.cache == nil {
		<-ctx.Done()
		return nil
	}
	select {
	case <-n.wanted:
	case <-ctx.Done():
		return nil
	}
	return n.cache.Start(ctx)
}

// NeedLeaderElection is false: every replica converts.
func (n *NodePoolCache) NeedLeaderElection() bool { return false }

// Reader reads the cached NodePools.
func (n *NodePoolCache) Reader() client.Reader {
	if n.cache == nil {
		return nil
	}
	return n.cache
}

// Synced reports whether the cache holds every NodePool.
func (n *NodePoolCache) Synced() bool { return n.informer != nil && n.informer.HasSynced() }

// trimNodePool keeps what a lookup reads: the name and expireAfter.
func trimNodePool(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	trimmed := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
	trimmed.SetName(u.GetName())
	trimmed.SetResourceVersion(u.GetResourceVersion())
	if value, found, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "expireAfter"); found {
		_ = unstructured.SetNestedField(trimmed.Object, value, "spec", "template", "spec", "expireAfter")
	}
	return trimmed, nil
}
