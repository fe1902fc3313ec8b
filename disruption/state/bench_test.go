package state

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeapi "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
)

// The fleet of BenchmarkCacheMemory: 200 NodePools of 50 nodes (10,000
// NodeClaims and Nodes), 4 EC2NodeClasses, 10 pods on every node (100,000)
// from 2,000 Deployments in 100 namespaces, each with a PodDisruptionBudget;
// every object built from the realistic fixtures under testdata.
const (
	memPools       = 200
	memPerPool     = 50
	memNodeClasses = 4
	memPodsPerNode = 10
	memApps        = 2000
	memNamespaces  = 100
)

// cacheVariant is how a cache holds an object decoded from the wire.
type cacheVariant struct {
	name string
	// crd decodes a Karpenter object; core decodes a Node, Pod or PDB.
	crd, core func(tb testing.TB, data []byte) runtimeapi.Object
	// decode is core for goroutines other than the test's.
	decode func(data []byte) (runtimeapi.Object, error)
}

// fullDecoder decodes core kinds into their whole Go types, as a default
// controller-runtime cache holds them.
var fullDecoder = clientgoscheme.Codecs.UniversalDeserializer()

var variants = []cacheVariant{
	{"full", decodeUnstructured, fatalOnError(decodeFull), decodeFull},                                // a default cache: unstructured CRDs, whole core objects
	{"views", fatalOnError(decodeTyped(false)), fatalOnError(decodeTyped(false)), decodeTyped(false)}, // the minimal views, not trimmed
	{"trimmed", fatalOnError(decodeTyped(true)), fatalOnError(decodeTyped(true)), decodeTyped(true)},  // what the loop caches
}

func fatalOnError(decode func([]byte) (runtimeapi.Object, error)) func(testing.TB, []byte) runtimeapi.Object {
	return func(tb testing.TB, data []byte) runtimeapi.Object {
		obj, err := decode(data)
		if err != nil {
			tb.Fatal(err)
		}
		return obj
	}
}

func decodeUnstructured(tb testing.TB, data []byte) runtimeapi.Object {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		tb.Fatal(err)
	}
	return u
}

func decodeFull(data []byte) (runtimeapi.Object, error) {
	obj, _, err := fullDecoder.Decode(data, nil, nil)
	return obj, err
}

func decodeTyped(trim bool) func([]byte) (runtimeapi.Object, error) {
	return func(data []byte) (runtimeapi.Object, error) {
		obj, _, err := decoder.Decode(data, nil, nil)
		if err == nil && trim {
			_, err = Trim(obj)
		}
		return obj, err
	}
}

// template is a testdata object with placeholders for what varies between
// objects: @NAME@, @UID@, @POOL@, @PID@, @NODE@, @APP@, @HASH@, @NS@. It is
// split at the placeholders once, so that varying it is a few appends.
type template struct {
	literals     []string // len(placeholders)+1 pieces of JSON
	placeholders []string
}

var placeholder = regexp.MustCompile(`@[A-Z]+@`)

func compileTemplate(json string) template {
	var t template
	last := 0
	for _, m := range placeholder.FindAllStringIndex(json, -1) {
		t.literals = append(t.literals, json[last:m[0]])
		t.placeholders = append(t.placeholders, json[m[0]:m[1]])
		last = m[1]
	}
	t.literals = append(t.literals, json[last:])
	return t
}

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
	labels := u.GetLabels()
	switch u.GetKind() {
	case "Node":
		labels["karpenter.sh/nodepool"] = "@POOL@"
		_ = unstructured.SetNestedField(u.Object, "@PID@", "spec", "providerID")
	case "NodeClaim":
		labels["karpenter.sh/nodepool"] = "@POOL@"
		_ = unstructured.SetNestedField(u.Object, "@PID@", "status", "providerID")
		_ = unstructured.SetNestedField(u.Object, "@NODE@", "status", "nodeName")
	case "Pod":
		for _, k := range []string{"app", "app.kubernetes.io/name", "app.kubernetes.io/instance"} {
			labels[k] = "@APP@"
		}
		labels["pod-template-hash"] = "@HASH@"
		u.SetNamespace("@NS@")
		u.SetGenerateName("@APP@-@HASH@-")
		_ = unstructured.SetNestedField(u.Object, "@NODE@", "spec", "nodeName")
	case "PodDisruptionBudget":
		labels["app"] = "@APP@"
		u.SetNamespace("@NS@")
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "@APP@"}, "spec", "selector", "matchLabels")
	}
	if labels != nil {
		u.SetLabels(labels)
	}
	out, err := u.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	return compileTemplate(string(out))
}

// vary fills in the placeholders from key, value pairs, so that no two
// objects share strings that differ in a real cluster.
func (t template) vary(i int, pairs ...string) []byte {
	values := map[string]string{"@UID@": fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7919)}
	for j := 0; j+1 < len(pairs); j += 2 {
		values[pairs[j]] = pairs[j+1]
	}
	out := make([]byte, 0, 8<<10)
	for j, p := range t.placeholders {
		out = append(out, t.literals[j]...)
		out = append(out, values[p]...)
	}
	return append(out, t.literals[len(t.literals)-1]...)
}

// fill decodes the fleet into informer-equivalent stores (thread-safe
// stores with the namespace index every informer has), and returns them
// with the heap they held before the pods were added.
func fill(tb testing.TB, v cacheVariant, tpl map[string]template, heapBeforePods *uint64) []toolscache.Indexer {
	newStore := func() toolscache.Indexer {
		return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	}
	karpenterKinds, pods := newStore(), newStore()
	// The loop's cache indexes pods by node as controller-runtime's
	// IndexField does: a namespaced and a cluster-wide entry per pod.
	if err := pods.AddIndexers(toolscache.Indexers{"field:" + PodNodeNameField: func(obj any) ([]string, error) {
		p, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		node := podNode(obj)
		return []string{p.GetNamespace() + "/" + node, "__all_namespaces/" + node}, nil
	}}); err != nil {
		tb.Fatal(err)
	}
	add := func(store toolscache.Indexer, obj runtimeapi.Object) {
		if err := store.Add(obj); err != nil {
			tb.Fatal(err)
		}
	}
	for c := range memNodeClasses {
		add(karpenterKinds, v.crd(tb, tpl["class"].vary(c, "@NAME@", fmt.Sprintf("class-%d", c))))
	}
	var nodes []string
	for p := range memPools {
		pool := fmt.Sprintf("pool-%03d", p)
		add(karpenterKinds, v.crd(tb, tpl["pool"].vary(p, "@NAME@", pool)))
		for i := range memPerPool {
			n := p*memPerPool + i
			providerID := fmt.Sprintf("aws:///us-east-1a/i-%017x", n)
			node := fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", p/250, p%250, i)
			nodes = append(nodes, node)
			add(karpenterKinds, v.crd(tb, tpl["claim"].vary(n, "@NAME@", fmt.Sprintf("%s-%05d", pool, i), "@POOL@", pool, "@PID@", providerID, "@NODE@", node)))
			add(karpenterKinds, v.core(tb, tpl["node"].vary(n, "@NAME@", node, "@POOL@", pool, "@PID@", providerID)))
		}
	}
	for a := range memApps {
		add(karpenterKinds, v.core(tb, tpl["pdb"].vary(a, "@NAME@", fmt.Sprintf("app-%04d", a), "@APP@", fmt.Sprintf("app-%04d", a), "@NS@", fmt.Sprintf("ns-%02d", a%memNamespaces))))
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	*heapBeforePods = ms.HeapAlloc
	// Decoding a hundred thousand pods is most of the benchmark's time: one
	// goroutine per core (the stores are thread-safe; Fatal is not, so
	// errors come back here).
	total := len(nodes) * memPodsPerNode
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += workers {
				a := i % memApps // each Deployment's pods spread over many nodes
				app := fmt.Sprintf("app-%04d", a)
				hash := fmt.Sprintf("%09x", a*104729)
				obj, err := v.decode(tpl["pod"].vary(i, "@NAME@", fmt.Sprintf("%s-%s-%05x", app, hash, i), "@APP@", app, "@HASH@", hash,
					"@NS@", fmt.Sprintf("ns-%02d", a%memNamespaces), "@NODE@", nodes[i%len(nodes)]))
				if err == nil {
					err = pods.Add(obj)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
	return []toolscache.Indexer{karpenterKinds, pods}
}

// podNode reads spec.nodeName of any variant of a pod.
func podNode(obj any) string {
	switch p := obj.(type) {
	case *Pod:
		return p.Spec.NodeName
	case *corev1.Pod:
		return p.Spec.NodeName
	}
	return ""
}

// held is the heap a variant's stores keep once decoding garbage is
// collected: everything, and the pods alone.
type held struct{ all, pods uint64 }

func retained(tb testing.TB, v cacheVariant, tpl map[string]template) held {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var beforePods uint64
	stores := fill(tb, v, tpl, &beforePods)
	runtime.GC()
	runtime.ReadMemStats(&after)
	want := []int{memNodeClasses + memPools*(1+2*memPerPool) + memApps, memPools * memPerPool * memPodsPerNode}
	for i, s := range stores {
		if n := len(s.ListKeys()); n != want[i] {
			tb.Fatalf("store %d holds %d objects, want %d", i, n, want[i])
		}
	}
	runtime.KeepAlive(stores)
	return held{all: after.HeapAlloc - before.HeapAlloc, pods: after.HeapAlloc - beforePods}
}

// BenchmarkCacheMemory reports the heap that caches of 200 NodePools, 10,000
// NodeClaims, 10,000 Nodes, 4 EC2NodeClasses, 100,000 Pods and 2,000
// PodDisruptionBudgets hold, per variant, the bytes per pod, and the trimmed
// cache as a fraction of a default one.
func BenchmarkCacheMemory(b *testing.B) {
	tpl := map[string]template{
		"pool": fixtureTemplate(b, "nodepool.json"), "claim": fixtureTemplate(b, "nodeclaim.json"),
		"node": fixtureTemplate(b, "node.json"), "class": fixtureTemplate(b, "ec2nodeclass.json"),
		"pod": fixtureTemplate(b, "pod.json"), "pdb": fixtureTemplate(b, "pdb.json"),
	}
	heap := map[string]held{}
	for b.Loop() {
		for _, v := range variants {
			heap[v.name] = retained(b, v, tpl)
		}
	}
	pods := float64(memPools * memPerPool * memPodsPerNode)
	for _, v := range variants {
		b.ReportMetric(float64(heap[v.name].all)/(1<<20), "MiB-"+v.name)
		b.ReportMetric(float64(heap[v.name].pods)/pods, "B/pod-"+v.name)
	}
	b.ReportMetric(float64(heap["trimmed"].all)/float64(heap["full"].all), "x-trimmed/full")
	b.ReportMetric(float64(heap["trimmed"].all)/float64(heap["views"].all), "x-trimmed/views")
	b.ReportMetric(float64(heap["trimmed"].pods)/float64(heap["full"].pods), "x-trimmed/full-pods")
}
