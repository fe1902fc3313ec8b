package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/karpgate/karpgate/test/wait"
)

func TestLimitIsTheFloorOrTheLiveHeapWithRoom(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name  string
		live  uint64
		limit int64
	}{
		{"no live heap", 0, 80 * mib},
		{"live heap with room under the floor", 40 * mib, 80 * mib},
		{"live heap with room at the floor", 48 * mib, 80 * mib},
		{"the fixed room over the floor", 50 * mib, 82 * mib},
		{"half the live heap over the fixed room", 100 * mib, 150 * mib},
		{"live heap too large to grow", math.MaxUint64, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Limit(80*mib, 32*mib, c.live); got != c.limit {
				t.Errorf("Limit(80 MiB, 32 MiB, %d) = %d, want %d", c.live, got, c.limit)
			}
		})
	}
}

// keep holds the live data of TestTheLimitFollowsTheLiveHeap where the
// compiler cannot prove it dead.
var keep [][]byte

// The limit rises when the live heap and its room outgrow the floor, falls back
// when it shrinks, and Stop puts back what Start found, after which
// collections change nothing.
func TestTheLimitFollowsTheLiveHeap(t *testing.T) {
	// The floor is far above a test binary's own live heap, so that
	// nothing but the data held here can lift the limit.
	const floor, room = 64 << 20, 16 << 20
	limit := func() int64 { return debug.SetMemoryLimit(-1) } // a negative limit reads it
	percent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	previousLimit, previousPercent := limit(), percent()

	tuner := Start(floor, room, 400)
	defer tuner.Stop()
	if limit() != floor || percent() != 400 {
		t.Fatalf("after Start: limit %d, GOGC %d; want %d, 400", limit(), percent(), floor)
	}

	for range 128 {
		keep = append(keep, make([]byte, 1<<20)) // 128 MiB live, twice the floor
	}
	wait.For(t, "the limit to reach the 128 MiB live heap and half again", func() bool {
		runtime.GC()
		return limit() >= 192<<20
	})

	keep = nil
	wait.For(t, "the limit to fall back to the floor", func() bool {
		runtime.GC()
		return limit() == floor
	})

	tuner.Stop()
	if limit() != previousLimit || percent() != previousPercent {
		t.Fatalf("after Stop: limit %d, GOGC %d; want %d, %d", limit(), percent(), previousLimit, previousPercent)
	}
	for range 128 {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.GC()
	if tuner.adjust() || limit() != previousLimit {
		t.Errorf("after Stop, a collection moved the limit to %d (want %d)", limit(), previousLimit)
	}
	keep = nil
}
