package background

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
)

// recorder is a testing.TB that keeps what Errorf reports instead of
// failing the test, so the test can check what Start fails a test with.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestStart(t *testing.T) {
	tests := []struct {
		name     string
		onCancel error
		want     []string
	}{
		{"stops cleanly", nil, nil},
		{"returns an error", errors.New("listener closed early"), []string{"the server: listener closed early"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			var returned atomic.Bool
			started := make(chan struct{})
			run := Start(rec, "the server", func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				returned.Store(true)
				return tt.onCancel
			})
			<-started
			if returned.Load() {
				t.Fatal("start returned before Stop")
			}
			run.Stop()
			if !returned.Load() {
				t.Error("Stop came back before start returned")
			}
			run.Stop() // again, as the test's cleanup will: reports nothing twice
			if !slices.Equal(rec.errs, tt.want) {
				t.Errorf("reported %q, want %q", rec.errs, tt.want)
			}
		})
	}
}
