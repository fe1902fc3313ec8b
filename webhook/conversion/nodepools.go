package conversion

import (
	"context"
	"errors"
	"sync"

	"github.com/go-logr/logr"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// v1ExpireAfterDefault is the v1 NodePool CRD's default for
// spec.template.spec.expireAfter. The API server applies it on read, so it
// only matters for a NodePool read without defaulting.
const v1ExpireAfterDefault = "720h"

// ClientNodePools reads NodePools from the cluster as v1 through reader.
type ClientNodePools struct {
	Reader client.Reader
	// Log receives the errors whose text names sockets (a failed dial);
	// the review's message says only that the API server was not reached.
	Log logr.Logger
}

var nodePoolV1GVK = schema.GroupVersionKind{Group: karpenter.CoreGroup, Version: karpenter.V1, Kind: karpenter.KindNodePool}

// ExpireAfter reads the NodePool's spec.template.spec.expireAfter; found is
// false when the NodePool does not exist.
func (c ClientNodePools) ExpireAfter(ctx context.Context, name string) (string, bool, error) {
	np := &unstructured.Unstructured{}
	np.SetGroupVersionKind(nodePoolV1GVK)
	if err := c.Reader.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
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
