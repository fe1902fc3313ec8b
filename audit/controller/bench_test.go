package controller

import (
	"runtime"
	"slices"
	"testing"
	"time"

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
// comparing it with the stored one (none yet, so each is published), and
// reports: the seconds one full audit takes (full-audit-s; the bound is 10
// on two cores), the same for a resync with nothing changed and every
// report stored (resync-s: nothing published), objects per second, and
// the ratio to the baseline of decoding the same objects' JSON in the same
// run (x-decode). cache-MiB is the live heap of the audit's cache of those
// objects (compact JSON); x-unstructured-cache how many times more the
// same objects take held as decoded maps, as an unstructured informer
// would hold them; report-digests-MiB the reports' cache (digests, not
// reports). peak-heap-MiB is the most a full audit holds above its caches.
func BenchmarkFullAudit(b *testing.B) {
	raws := corpus.StoredCluster(benchClasses, benchPools, benchClaims)
	objects := &mapObjects{m: map[string]*Stored{}}
	var cacheBytes, unstructuredBytes uint64
	cacheBytes = retained(func() {
		for _, raw := range raws {
			objects.put(b, raw)
		}
	})
	var held []*unstructured.Unstructured
	unstructuredBytes = retained(func() {
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

	full := func(engines Engines, reports reportSource) (fullAudit, *writer) {
		a := newTestAuditor(b, engines, objects)
		w := newWriter(nil, reports, a.desire, 1, a.log)
		a.writer.Store(w)
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
		return got, w
	}
	var cold, warm time.Duration
	var digestBytes uint64
	for b.Loop() {
		b.StopTimer()
		engines := &swappable{e: newEngine(b, "rules:\n  KG102: {severity: deny}\n")}
		b.StartTimer()
		got, w := full(engines, newDigests())
		cold += got.duration
		b.StopTimer()
		// The reports written, held as the reports informer holds them.
		written := newDigests()
		var reports []*StoredReport
		for w.queue.Len() > 0 {
			name, _ := w.queue.Get()
			r, err := w.desire(b.Context(), name)
			if err != nil || r == nil {
				b.Fatalf("%s: %v", name, err)
			}
			d := written.add(digested(roundTrip(b, r)))
			reports = append(reports, d)
			w.queue.Done(name)
		}
		// What the digests hold, without the map the test keeps them in.
		var held []*StoredReport
		digestBytes = retained(func() {
			for _, r := range reports {
				c := r.DeepCopyObject().(*StoredReport)
				c.Digest.Stamps = slices.Clone(r.Digest.Stamps)
				c.Scope = r.Scope.DeepCopy()
				held = append(held, c)
			}
		})
		runtime.KeepAlive(held)
		got, w = full(engines, written)
		warm += got.duration
		if n := w.queue.Len(); n != 0 {
			b.Fatalf("a resync with nothing changed published %d reports", n)
		}
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
	b.ReportMetric(float64(digestBytes)/(1<<20), "report-digests-MiB")
	b.ReportMetric(float64(unstructuredBytes)/float64(cacheBytes), "x-unstructured-cache")
	engines := &swappable{e: newEngine(b, "")}
	b.ReportMetric(float64(benchratio.PeakHeap(func() { full(engines, newDigests()) }))/(1<<20), "peak-heap-MiB")
}

// digests is a reports informer's store, indexed by object.
type digests struct {
	byName   map[string]*StoredReport
	byObject map[string][]*StoredReport
}

func newDigests() digests {
	return digests{byName: map[string]*StoredReport{}, byObject: map[string][]*StoredReport{}}
}

func (d digests) add(r *StoredReport) *StoredReport {
	d.byName[r.Name] = r
	k := key(r.Scope.Kind, r.Scope.Name)
	d.byObject[k] = append(d.byObject[k], r)
	return r
}

func (d digests) Get(name string) (*StoredReport, bool) { r, ok := d.byName[name]; return r, ok }

func (d digests) Names() []string {
	out := make([]string, 0, len(d.byName))
	for n := range d.byName {
		out = append(out, n)
	}
	return out
}

func (d digests) OfObject(k string) []*StoredReport { return d.byObject[k] }

// retained is the heap f leaves allocated: live bytes after a collection,
// before and after.
func retained(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}
