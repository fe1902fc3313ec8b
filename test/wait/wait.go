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

// ForProgress polls check until it returns nil, as ForNoError does, but
// gives up only after Patience in which the progress check reports has not
// grown: work that a busy machine slows down but that keeps moving (objects
// judged, reports written) is waited for, work that stopped is not.
// progress must only grow while the work moves on, never while it retries.
func ForProgress(t testing.TB, what string, check func() (progress float64, err error)) {
	t.Helper()
	if err := pollProgress(Patience, check); err != nil {
		t.Fatalf("waited %v without progress for %s: %v", Patience, what, err)
	}
}

func pollProgress(patience time.Duration, check func() (float64, error)) error {
	best, seen := 0.0, false
	deadline := time.Now().Add(patience)
	interval := 5 * time.Millisecond
	for {
		progress, err := check()
		if err == nil {
			return nil
		}
		if !seen || progress > best {
			best, seen = progress, true
			deadline = time.Now().Add(patience)
		} else if time.Now().After(deadline) {
			return err
		}
		time.Sleep(interval)
		interval = min(2*interval, maxInterval)
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
