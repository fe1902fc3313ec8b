package sandbox_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/sandbox"
	"github.com/karpgate/karpgate/test/wait"
)

// endless texts and patterns: each call below would run for minutes,
// longer still under the race detector; stopped, it ends at once.
const (
	// a thousand optional 0s then a 1, a pattern Go runs in time
	// proportional to its thousand states times the text: 900,000 0s
	// (sprintf makes them in one call; replace would count a step each).
	slowPattern = `concat("", [concat("", ["0?" | some _ in numbers.range(1, 1000)]), "1"])`
	slowText    = `sprintf("%0900000d", [0])`
	// a star, a thousand ?s and a 1: a thousand ways to be part way.
	slowGlob = `concat("", ["*", concat("", ["?" | some _ in numbers.range(1, 1000)]), "1"])`
)

// TestASlowBuiltinStopsWithItsEvaluation: a call of a regular expression
// or a glob that would run for minutes stops when its evaluation is
// cancelled: the evaluation returns with the context's error, the call is
// no longer running when it does (it ran on the evaluation's goroutine and
// was stopped part way, not left to finish), and no goroutine is left
// behind. The cancellation comes once the call runs, not after a fixed
// time, so a busy machine changes nothing.
func TestASlowBuiltinStopsWithItsEvaluation(t *testing.T) {
	for _, tt := range []struct{ name, call string }{
		{"regex.match", `regex.match(` + slowPattern + `, ` + slowText + `)`},
		{"regex.find_n", `count(regex.find_n(` + slowPattern + `, ` + slowText + `, -1)) > 0`},
		{"regex.find_all_string_submatch_n", `count(regex.find_all_string_submatch_n(` + slowPattern + `, ` + slowText + `, 1)) > 0`},
		{"regex.split", `count(regex.split(` + slowPattern + `, ` + slowText + `)) > 1`},
		{"regex.replace", `regex.replace(` + slowText + `, ` + slowPattern + `, "") != ""`},
		{"glob.match", `glob.match(` + slowGlob + `, null, ` + slowText + `)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := userRule(t, `object.get(input.object, ["metadata", "annotations", "example.com/slow"], "") == "yes"
	`+tt.call)
			e := newTestEngine(t, policies.Options{PolicyDirs: []string{dir}})
			req := policies.Request{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"example.com/slow": "yes"}}}, Point: config.Admission, Operation: policies.Create}
			stoppedBefore, goroutinesBefore := sandbox.StoppedCalls(), runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cancelled := make(chan struct{})
			go func() {
				defer close(cancelled)
				_ = wait.Poll(wait.Patience, func() error {
					if sandbox.StoppableCallsInFlight() == 0 {
						return errors.New(tt.name + " has not started")
					}
					return nil
				})
				cancel()
			}()
			_, err := e.Evaluate(ctx, req)
			if n := sandbox.StoppableCallsInFlight(); n != 0 {
				t.Fatalf("%d calls of %s still running after the evaluation returned", n, tt.name)
			}
			<-cancelled
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want the context's end", err)
			}
			if got := sandbox.StoppedCalls() - stoppedBefore; got != 1 {
				t.Fatalf("%d calls stopped part way, want 1: %s ran to its end", got, tt.name)
			}
			// The context's AfterFunc, which stopped the call, may still be
			// returning; nothing else may be left.
			wait.For(t, "the goroutines to be those before the evaluation", func() bool { return runtime.NumGoroutine() <= goroutinesBefore })
		})
	}
}
