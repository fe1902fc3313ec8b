package conversion

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// failingReader answers every Get with err.
type failingReader struct {
	client.Reader
	err error
}

func (f failingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return f.err
}

// TestLookupErrorsNameNoSockets: a failed dial's text (which names the API
// server's address) stays in the log; the API server's own refusals pass.
func TestLookupErrorsNameNoSockets(t *testing.T) {
	dial := &url.Error{Op: "Get", URL: "https://10.96.0.1:443/apis/karpenter.sh/v1/nodepools/gpu", Err: errors.New("dial tcp 10.96.0.1:443: connect: connection refused")}
	_, _, err := ClientNodePools{Reader: failingReader{err: dial}, Log: logr.Discard()}.ExpireAfter(context.Background(), "gpu")
	if err == nil || strings.Contains(err.Error(), "10.96.0.1") || !strings.Contains(err.Error(), "could not be reached") {
		t.Fatalf("got %v", err)
	}
	_, _, err = ClientNodePools{Reader: failingReader{err: apierrors.NewServiceUnavailable("etcd timeout")}, Log: logr.Discard()}.ExpireAfter(context.Background(), "gpu")
	if err == nil || !strings.Contains(err.Error(), "etcd timeout") {
		t.Fatalf("got %v, want the API server's message", err)
	}
}

// mapReader answers Gets of NodePools from a map of name to expireAfter.
type mapReader struct {
	client.Reader
	pools map[string]string
	gets  int
}

func (m *mapReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	m.gets++
	v, ok := m.pools[key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "karpenter.sh", Resource: "nodepools"}, key.Name)
	}
	return unstructured.SetNestedField(obj.(*unstructured.Unstructured).Object, v, "spec", "template", "spec", "expireAfter")
}

// TestLookupsReadTheCacheOnceItHasSynced: before the NodePool cache has
// synced, lookups read the API server; after, the cache alone.
func TestLookupsReadTheCacheOnceItHasSynced(t *testing.T) {
	live, cached := &mapReader{pools: map[string]string{"gpu": "24h"}}, &mapReader{pools: map[string]string{"gpu": "48h"}}
	synced := false
	pools := ClientNodePools{Reader: live, Cache: cached, Synced: func() bool { return synced }, Log: logr.Discard()}
	if v, found, err := pools.ExpireAfter(context.Background(), "gpu"); v != "24h" || !found || err != nil || cached.gets != 0 {
		t.Fatalf("before the sync: %q %v %v, %d cache reads; want the API server's answer", v, found, err, cached.gets)
	}
	synced = true
	if v, found, err := pools.ExpireAfter(context.Background(), "gpu"); v != "48h" || !found || err != nil || live.gets != 1 {
		t.Fatalf("after the sync: %q %v %v, %d API reads; want the cache's answer", v, found, err, live.gets)
	}
	if _, found, err := pools.ExpireAfter(context.Background(), "gone"); found || err != nil {
		t.Fatalf("a NodePool the cache does not hold: found %v, %v", found, err)
	}
}

// TestNodePoolCacheWithoutKarpenterCRDs: a cluster without Karpenter's
// CRDs yet (karpgate installed first) still gets a serving replica whose
// lookups read the API server, not a start-up error.
func TestNodePoolCacheWithoutKarpenterCRDs(t *testing.T) {
	noKinds := meta.NewDefaultRESTMapper(nil)
	c, err := newNodePoolCache(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{Mapper: noKinds})
	if err != nil {
		t.Fatalf("without Karpenter's CRDs: %v, want a cache that never syncs", err)
	}
	if c.Synced() {
		t.Fatal("a cache without NodePools says it has synced")
	}
}
