package app

import (
	"os"

	"github.com/karpgate/karpgate/internal/gctune"
	"github.com/karpgate/karpgate/policies"
)

// lintMemoryFloor is the Go heap `karpgate lint` lets grow before
// collecting. Lint's live heap is what it compiled (about 25 MiB with the
// CRD schemas) plus a small index for the cross-object rules, about 600
// bytes a document: with the binary's own pages, the process stays near
// 135 MB up to some 40,000 documents. Past that the tuner raises the limit
// with the live heap, so a larger input costs memory, not time.
const lintMemoryFloor = 80 << 20

// lintMemoryRoom is the least the collector may let the heap grow past the
// live data once the floor no longer holds it.
const lintMemoryRoom = 32 << 20

// lintGCPercent lets the heap grow well past the live data before the
// floor is reached: for the same memory, about a third less CPU in the
// collector than the default GOGC of 100.
const lintGCPercent = 400

// tuneGCForStreaming holds the heap of a lint run at lintMemoryFloor,
// growing it with the live heap when that and its room outgrow the floor
// (see gctune). It does so only when the user has not tuned the collector
// (GOGC, GOMEMLIMIT) and the engine keeps reduced objects for cross-object
// rules: a --policy rule that reads input.inventory keeps whole objects,
// and the default collector suits that better. It returns a function that
// puts the settings back.
func tuneGCForStreaming(engine *policies.Engine) (restore func()) {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	if gogc || limit || engine.CrossObjectPaths() == nil {
		return func() {}
	}
	return gctune.Start(lintMemoryFloor, lintMemoryRoom, lintGCPercent).Stop
}
