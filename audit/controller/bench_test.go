package controller

import (
	"runtime"
	"testing"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/test/benchratio"
	"github.com/karpgate/karpgate/test/corpus"
)

// The benchmark cluster: 10,000 stored objects, as a large Karpenter
// cluster has them: 20 EC2NodeClasses, 50 NodePools and 9,930 NodeClaims.
const (
	benchClasses = 20
	benchPools   = 50
	benchClaims  = 9930
	benchObjects = benchClasses + benchPools + benchClaims
)

// BenchmarkFullAudit judges 10,000 stored objects after a configuration
// change (a new engine: nothing memoized), with as many workers as
// GOMAXPROCS and no evaluation limit, building each object's report and
// comparing it with the stored one (none here, so each is published), and
// reports: the seconds one full audit takes (full-audit-s; the bound is 10
// on two cores), the same for a resync with nothing changed
// (resync-s, memo warm), objects per second, and the ratio to the
// baseline of decoding the same objects' JSON in the same run
// (x-decode). cache-MiB is the live heap of the audit's cache of those
// objects (compact JSON); x-unstructured-cache how many times more the
// same objects take held as decoded maps, as an unstructured informer
// would hold them. peak-heap-MiB is the most a full audit holds above its
// cache.
func BenchmarkFullAudit(b *testing.B) {
	raws := corpus.StoredCluster(benchClasses, benchPools, benchClaims)
	objects := &mapObjects{m: map[string]*Stored{}}
	var cacheBytes, unstructuredBytes uint64
	cacheBytes = benchratio.PeakHeap(func() {
		for _, raw := range raws {
			objects.put(b, raw)
		}
	})
	var held []*unstructured.Unstructured
	unstructuredBytes = benchratio.PeakHeap(func() {
		for _, raw := range raws {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(raw); err != nil {
				b.Fatal(err)
			}
			held = append(held, u)
		}
	})
	runtime.KeepAlive(held)
	held = nil

	full := func(engines Engines) fullAudit {
		a := newTestAuditor(b, engines, objects)
		a.writer.Store(newWriter(nil, &mapReports{m: map[string]*orv1.ClusterReport{}}, a.desire, 1, a.log))
		a.now = time.Now
		if err := a.rebuild(); err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		workers := runtime.GOMAXPROCS(0)
		for range workers {
			go func() { a.work(b.Context()); done <- struct{}{} }()
		}
		got := <-a.completed
		a.queue.ShutDown()
		for range workers {
			<-done
		}
		if got.objects != benchObjects {
			b.Fatalf("audited %d objects, want %d", got.objects, benchObjects)
		}
		return got
	}
	var cold, warm time.Duration
	for b.Loop() {
		b.StopTimer()
		engines := &swappable{e: newEngine(b, "rules:\n  KG102: {severity: deny}\n")}
		b.StartTimer()
		cold += full(engines).duration
		b.StopTimer()
		warm += full(engines).duration
		b.StartTimer()
	}
	b.StopTimer()
	decodeAll := func() {
		for _, raw := range raws {
			if _, err := conversion.DecodeObject(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	start := time.Now()
	decodeAll()
	decode := time.Since(start)
	n := float64(b.N)
	b.ReportMetric(cold.Seconds()/n, "full-audit-s")
	b.ReportMetric(warm.Seconds()/n, "resync-s")
	b.ReportMetric(benchObjects*n/cold.Seconds(), "objects/s")
	b.ReportMetric(float64(cold)/n/float64(decode), "x-decode")
	b.ReportMetric(float64(cacheBytes)/(1<<20), "cache-MiB")
	b.ReportMetric(float64(unstructuredBytes)/float64(cacheBytes), "x-unstructured-cache")
	engines := &swappable{e: newEngine(b, "")}
	b.ReportMetric(float64(benchratio.PeakHeap(func() { full(engines) }))/(1<<20), "peak-heap-MiB")
}
