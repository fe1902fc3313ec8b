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
	before := heapObjects()
	old := debug.SetGCPercent(1)
	defer debug.SetGCPercent(old)
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(50 * time.Microsecond)
		defer tick.Stop()
		for {
			if h := heapObjects(); h > peak.Load() {
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
	if p := peak.Load(); p > before {
		return p - before
	}
	return 0
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
