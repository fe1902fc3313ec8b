package benchratio

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// PeakHeap runs f once and returns the most heap it held above what was
// live before, sampled while f runs with the collector at GOGC=1, so the
// heap stays within about a percent of what is live. It is an estimate for
// benchmarks (sampling can miss a short peak), never for a test verdict.
func PeakHeap(f func()) uint64 {
	runtime.GC()
	before := HeapObjects()
	old := debug.SetGCPercent(1)
	defer debug.SetGCPercent(old)
	if p := MaxHeapDuring(f, 50*time.Microsecond); p > before {
		return p - before
	}
	return 0
}

// MaxHeapDuring runs f once and returns the largest HeapObjects seen while
// it ran, sampled every interval, with the collector as it is: for a run
// too long or too busy for GOGC=1, where the figure includes garbage not
// yet collected.
func MaxHeapDuring(f func(), interval time.Duration) uint64 {
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if h := HeapObjects(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak.Load()
}

// HeapObjects is the heap the process's objects take now, live or not yet
// collected (runtime/metrics' /memory/classes/heap/objects:bytes).
func HeapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
