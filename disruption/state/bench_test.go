package state

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeapi "k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// The fleet of BenchmarkCacheMemory: as many objects as the recompute
// benchmark, built from the realistic fixtures under testdata.
const (
	memPools       = 200
	memPerPool     = 50
	memNodeClasses = 4
)

// cacheVariant is how a cache holds an object decoded from the wire.
type cacheVariant struct {
	name string
	// crd decodes a Karpenter object; node decodes a Node.
	crd, node func(tb testing.TB, data []byte) runtimeapi.Object
}

var variants = []cacheVariant{
	{"full", decodeUnstructured, decodeTyped(false)},  // a default cache: unstructured CRDs, whole Nodes
	{"views", decodeTyped(false), decodeTyped(false)}, // the minimal views, not trimmed
	{"trimmed", decodeTyped(true), decodeTyped(true)}, // what the loop caches
}

func decodeUnstructured(tb testing.TB, data []byte) runtimeapi.Object {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		tb.Fatal(err)
	}
	return u
}

func decodeTyped(trim bool) func(testing.TB, []byte) runtimeapi.Object {
	return func(tb testing.TB, data []byte) runtimeapi.Object {
		obj, _, err := decoder.Decode(data, nil, nil)
		if err != nil {
			tb.Fatal(err)
		}
		if trim {
			_, _ = Trim(obj)
		}
		return obj
	}
}

// template is a testdata object with placeholders for what varies between
// objects: name, UID, pool label and provider ID.
type template struct{ json string }

func fixtureTemplate(tb testing.TB, name string) template {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	u := unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		tb.Fatal(err)
	}
	u.SetName("@NAME@")
	u.SetUID("@UID@")
	if labels := u.GetLabels(); labels != nil {
		labels["karpenter.sh/nodepool"] = "@POOL@"
		u.SetLabels(labels)
	}
	switch u.GetKind() {
	case "Node":
		_ = unstructured.SetNestedField(u.Object, "@PID@", "spec", "providerID")
	case "NodeClaim":
		_ = unstructured.SetNestedField(u.Object, "@PID@", "status", "providerID")
	}
	out, err := u.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	return template{string(out)}
}

// vary fills in the placeholders, so that no two objects share strings.
func (t template) vary(name, pool, providerID string, i int) []byte {
	uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7919)
	return []byte(strings.NewReplacer("@NAME@", name, "@UID@", uid, "@POOL@", pool, "@PID@", providerID).Replace(t.json))
}

// fill decodes the fleet into an informer-equivalent store (a thread-safe
// store with the namespace index every informer has) and returns it.
func fill(tb testing.TB, v cacheVariant, tpl map[string]template) toolscache.Indexer {
	store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	add := func(obj runtimeapi.Object) {
		if err := store.Add(obj); err != nil {
			tb.Fatal(err)
		}
	}
	for c := range memNodeClasses {
		add(v.crd(tb, tpl["class"].vary(fmt.Sprintf("class-%d", c), "", "", c)))
	}
	for p := range memPools {
		pool := fmt.Sprintf("pool-%03d", p)
		add(v.crd(tb, tpl["pool"].vary(pool, "", "", p)))
		for i := range memPerPool {
			n := p*memPerPool + i
			providerID := fmt.Sprintf("aws:///us-east-1a/i-%017x", n)
			add(v.crd(tb, tpl["claim"].vary(fmt.Sprintf("%s-%05d", pool, i), pool, providerID, n)))
			add(v.node(tb, tpl["node"].vary(fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", p/250, p%250, i), pool, providerID, n)))
		}
	}
	return store
}

// retained is the heap the store keeps once decoding garbage is collected.
func retained(tb testing.TB, v cacheVariant, tpl map[string]template) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	store := fill(tb, v, tpl)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := len(store.ListKeys()); n != memNodeClasses+memPools*(1+2*memPerPool) {
		tb.Fatalf("store holds %d objects", n)
	}
	runtime.KeepAlive(store)
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkCacheMemory reports the heap that caches of 200 NodePools, 10,000
// NodeClaims, 10,000 Nodes and 4 EC2NodeClasses hold, per variant, and the
// trimmed cache as a fraction of a default one.
func BenchmarkCacheMemory(b *testing.B) {
	tpl := map[string]template{
		"pool": fixtureTemplate(b, "nodepool.json"), "claim": fixtureTemplate(b, "nodeclaim.json"),
		"node": fixtureTemplate(b, "node.json"), "class": fixtureTemplate(b, "ec2nodeclass.json"),
	}
	held := map[string]uint64{}
	for b.Loop() {
		for _, v := range variants {
			held[v.name] = retained(b, v, tpl)
		}
	}
	for _, v := range variants {
		b.ReportMetric(float64(held[v.name])/(1<<20), "MiB-"+v.name)
	}
	b.ReportMetric(float64(held["trimmed"])/float64(held["full"]), "x-trimmed/full")
	b.ReportMetric(float64(held["trimmed"])/float64(held["views"]), "x-trimmed/views")
}
