// Package gctune holds a process's Go heap at a fixed size while the data it
// keeps is small, and lets the heap grow with that data once it is not.
//
// A fixed soft memory limit (GOMEMLIMIT) alone is a cliff: when the live
// heap nears it, the collector runs back to back and the program crawls
// (lint on 120,000 documents, whose index outgrew a 96 MiB limit, took 3.6x
// as long as without the limit). A fixed GOGC alone makes the heap a
// multiple of the live data however little that is. The tuner keeps a
// generous GOGC and moves the limit after every collection to the larger of
// the floor and the live heap plus room to allocate (half the live heap, and
// at least a fixed amount): while the live data is small, memory is flat and
// the collector runs only when the floor is reached; as it grows, the
// collector's work per byte allocated stays about the same (each cycle marks
// the live heap, and cycles come once per half a live heap allocated).
package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// liveHeap is the runtime metric for the heap the last collection marked
// live.
const liveHeap = "/gc/heap/live:bytes"

// Tuner adjusts the soft memory limit after every garbage collection. GOGC
// and the limit belong to the whole process: run one Tuner at a time.
type Tuner struct {
	floor, room int64

	mu      sync.Mutex
	stopped bool
	// previous are the settings Start replaced, put back by Stop.
	previousLimit   int64
	previousPercent int
	sample          []metrics.Sample
}

// Start sets GOGC to percent and the soft memory limit to floor bytes;
// after each collection until Stop, it sets the limit to Limit(floor, room,
// live heap): up with the live heap, and back down to the floor.
func Start(floor, room int64, percent int) *Tuner {
	t := &Tuner{floor: floor, room: room, sample: []metrics.Sample{{Name: liveHeap}}}
	t.previousLimit = debug.SetMemoryLimit(floor)
	t.previousPercent = debug.SetGCPercent(percent)
	t.arm()
	return t
}

// Stop puts back the settings Start found; the tuner changes nothing
// afterwards.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	debug.SetGCPercent(t.previousPercent)
	debug.SetMemoryLimit(t.previousLimit)
}

// sentinel is allocated for the collector to find unreachable: its cleanup
// runs once per collection. It holds a pointer so that it is never packed
// with other small objects by the tiny allocator, which would delay it.
type sentinel struct {
	_ *byte
	_ [2]int64
}

// arm asks for adjust to run after the next collection, and to re-arm.
func (t *Tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *Tuner) {
		if t.adjust() {
			t.arm()
		}
	}, t)
}

// adjust sets the limit from the live heap the last collection measured
// and says whether the tuner is still running.
func (t *Tuner) adjust() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	debug.SetMemoryLimit(Limit(t.floor, t.room, t.sample[0].Value.Uint64()))
	return true
}

// Limit is the soft memory limit for a live heap of live bytes: the floor,
// or when it is more, the live heap plus room to allocate before the next
// collection, half the live heap and at least room bytes. The collector
// then never has less than room to work with: a limit at the live heap
// would make it run back to back.
func Limit(floor, room int64, live uint64) int64 {
	if live > math.MaxInt64/2 {
		return math.MaxInt64
	}
	l := int64(live)
	return max(floor, l+max(room, l/2))
}
