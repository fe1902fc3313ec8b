package benchratio

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// heapObjects is the live heap the collector tracks, readable without
// stopping the world.
const heapObjects = "/memory/classes/heap/objects:bytes"

// PeakHeap runs f once and returns the largest live heap seen while it ran,
// sampled every millisecond after a collection, so that what f holds at its
// worst shows rather than what it allocated in total.
func PeakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: heapObjects}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	peak := read()
	done := make(chan struct{})
	sampled := make(chan uint64)
	go func() {
		highest := peak
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				sampled <- highest
				return
			case <-tick.C:
				if v := read(); v > highest {
					highest = v
				}
			}
		}
	}()
	f()
	close(done)
	return max(<-sampled, read())
}
