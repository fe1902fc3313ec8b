package app

import (
	"os"
	"runtime/debug"

	"github.com/karpgate/karpgate/policies"
)

// lintMemoryLimit is the soft limit on the Go heap that `karpgate lint`
// collects garbage against. Lint holds a bounded amount of memory whatever
// the size of its input (a window of documents and a small index; see
// lint.Run), about 30 MiB of it at 40,000 documents, so the limit leaves
// room and keeps the process under 150 MB.
const lintMemoryLimit = 96 << 20

// tuneGCForStreaming lets the heap of a lint run grow to lintMemoryLimit
// before collecting, rather than collecting each time it doubles: for the
// same bounded memory, about a third less CPU in the garbage collector. It
// does so only when the user has not tuned the collector (GOGC,
// GOMEMLIMIT) and the engine keeps reduced objects for cross-object rules:
// a --policy rule that reads input.inventory makes memory grow with the
// input, and a fixed limit would then make the collector run constantly.
// It returns a function that puts the settings back.
func tuneGCForStreaming(engine *policies.Engine) (restore func()) {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	if gogc || limit || engine.CrossObjectPaths() == nil {
		return func() {}
	}
	previousLimit := debug.SetMemoryLimit(lintMemoryLimit)
	previousPercent := debug.SetGCPercent(400)
	return func() {
		debug.SetGCPercent(previousPercent)
		debug.SetMemoryLimit(previousLimit)
	}
}
