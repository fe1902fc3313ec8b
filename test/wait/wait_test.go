package wait

import (
	"errors"
	"testing"
	"time"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	err := Poll(time.Hour, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Poll = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestPollGivesUpWithTheLastError(t *testing.T) {
	calls := 0
	err := Poll(0, func() error {
		calls++
		return errors.New("still broken")
	})
	if err == nil || err.Error() != "still broken" || calls != 1 {
		t.Fatalf("Poll = %v after %d calls, want the check's error after one call", err, calls)
	}
}
