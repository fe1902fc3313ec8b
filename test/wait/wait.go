// Package wait makes tests wait for a condition, never for a fixed time.
//
// A test that sleeps and then checks races the machine: on a busy CI runner
// the thing it waits for takes longer than the sleep. Tests here poll the
// condition instead, and give up only after Patience, which is long enough
// that a failure means the condition never came, not that the machine was
// slow.
package wait

import (
	"testing"
	"time"
)

// Patience is how long a condition may take before the test fails. It is
// generous on purpose: it bounds a broken test, it does not time a working
// one.
const Patience = 3 * time.Minute

// maxInterval caps the polling backoff so a condition met late is still
// noticed promptly.
const maxInterval = 250 * time.Millisecond

// For polls ok until it returns true, failing the test after Patience with
// what it was waiting for.
func For(t testing.TB, what string, ok func() bool) {
	t.Helper()
	ForNoError(t, what, func() error {
		if ok() {
			return nil
		}
		return errNotYet
	})
}

// ForNoError polls check until it returns nil, failing the test after
// Patience with the last error.
func ForNoError(t testing.TB, what string, check func() error) {
	t.Helper()
	if err := Poll(Patience, check); err != nil {
		t.Fatalf("waited %v for %s: %v", Patience, what, err)
	}
}

// Poll calls check until it returns nil or patience runs out, and returns
// the last error. Intervals start at a few milliseconds and back off.
func Poll(patience time.Duration, check func() error) error {
	deadline := time.Now().Add(patience)
	interval := 5 * time.Millisecond
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(interval)
		interval = min(2*interval, maxInterval)
	}
}

type notYet struct{}

func (notYet) Error() string { return "the condition did not hold" }

var errNotYet error = notYet{}
