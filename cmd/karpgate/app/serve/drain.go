package serve

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"
)

// drainer delays the end of the webhook manager's context so that
// readiness fails first and requests already routed here are still served.
// The drain starts when the parent context ends (SIGTERM).
type drainer struct {
	draining atomic.Bool
	// timer is time.After; tests replace it to end the delay themselves.
	timer func(time.Duration) <-chan time.Time
}

// after returns the context the webhooks run on: it ends delay after the
// drain starts.
func (d *drainer) after(ctx context.Context, delay time.Duration) context.Context {
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		<-ctx.Done()
		d.draining.Store(true)
		if delay > 0 {
			timer := d.timer
			if timer == nil {
				timer = time.After
			}
			<-timer(delay) // the point of the drain: keep serving this long
		}
		cancel()
	}()
	return run
}

func (d *drainer) checker(_ *http.Request) error {
	if d.draining.Load() {
		return errors.New("shutting down: still serving requests already routed here")
	}
	return nil
}
