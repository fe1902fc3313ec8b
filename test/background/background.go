// Package background runs a component's blocking Start beside a test: the
// webhook server, the policy watcher, the controller manager. Each needs
// the same care: cancel it when the test ends, wait for it to return, and
// fail the test if it returned an error, so that a component that crashed
// or would not stop is never mistaken for one that stopped cleanly.
package background

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/karpgate/karpgate/test/wait"
)

// Run is a component started by Start.
type Run struct {
	cancel context.CancelFunc
	stop   func()
}

// Start runs start in a goroutine until the test ends or Stop is called,
// whichever comes first. Stopping cancels start's context and waits for it
// to return, at most wait.Patience; an error from start, or a start that
// does not return, fails the test, naming what.
func Start(tb testing.TB, what string, start func(context.Context) error) *Run {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("%s: %v", what, err)
				}
			case <-time.After(wait.Patience):
				tb.Errorf("%s did not stop within %s of its cancel", what, wait.Patience)
			}
		})
	}
	tb.Cleanup(stop)
	return &Run{cancel: cancel, stop: stop}
}

// Stop cancels the component and waits for its Start to return.
func (r *Run) Stop() { r.stop() }

// Cancel cancels the component and returns at once, for a test that
// watches the shutdown itself (in-flight requests, a closing listener);
// the test's end still waits for Start to return.
func (r *Run) Cancel() { r.cancel() }
