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

// TestPollProgress: work that keeps moving is waited for however long each
// step takes; work that stops is given up on with its last error.
func TestPollProgress(t *testing.T) {
	for _, tt := range []struct {
		name      string
		progress  func(call int) float64
		doneAt    int // the call that reports done; 0: never
		wantErr   bool
		wantCalls int
	}{
		// With no patience at all, each call that shows progress still
		// earns the next one.
		{name: "progress every call", progress: func(call int) float64 { return float64(call) }, doneAt: 20, wantCalls: 20},
		{name: "stalled from the start", progress: func(int) float64 { return 7 }, wantErr: true, wantCalls: 2},
		{name: "stalls after moving", progress: func(call int) float64 { return float64(min(call, 5)) }, wantErr: true, wantCalls: 6},
		{name: "progress that falls back is none", progress: func(call int) float64 { return float64(10 - call) }, wantErr: true, wantCalls: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := pollProgress(0, func() (float64, error) {
				calls++
				if calls == tt.doneAt {
					return 0, nil
				}
				return tt.progress(calls), errors.New("not yet")
			})
			if (err != nil) != tt.wantErr || calls != tt.wantCalls {
				t.Fatalf("pollProgress = %v after %d calls, want error %v after %d", err, calls, tt.wantErr, tt.wantCalls)
			}
		})
	}
}
