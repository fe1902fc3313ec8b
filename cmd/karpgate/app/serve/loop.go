package serve

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var loopRestarts = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "karpgate_disruption_loop_restarts_total",
	Help: "Times the disruption loop stopped on its own (a lost Lease, failing API calls) and was started again while the webhooks kept serving.",
})

func init() { ctrlmetrics.Registry.MustRegister(loopRestarts) }

// Restart backoff of the loop: soon after a lost Lease (another replica
// holds it now; this one waits its turn in a new election), longer when
// setting the loop up fails again and again.
const (
	firstLoopBackoff = time.Second
	maxLoopBackoff   = time.Minute
)

// loopSupervisor runs the disruption loop's manager, and a new one each
// time it stops on its own, until its context ends.
type loopSupervisor struct {
	first manager.Manager
	next  func() (manager.Manager, error)
	log   logr.Logger
	// after is time.After; tests replace it.
	after func(time.Duration) <-chan time.Time
}

// run returns nil once ctx ends; it never gives up before.
func (s *loopSupervisor) run(ctx context.Context) error {
	after := s.after
	if after == nil {
		after = time.After
	}
	m, backoff := s.first, firstLoopBackoff
	for {
		if m != nil {
			started := time.Now()
			err := m.Start(ctx)
			if ctx.Err() != nil {
				return nil //nolint:nilerr // serve is stopping: the loop's error is its shutdown, not a failure
			}
			if time.Since(started) > maxLoopBackoff {
				backoff = firstLoopBackoff // it ran a good while: a new failure
			}
			loopRestarts.Inc()
			s.log.Error(err, "the disruption loop stopped; the webhooks keep serving, and a new loop starts after a pause", "pause", backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-after(backoff):
		}
		var err error
		if m, err = s.next(); err != nil {
			s.log.Error(err, "setting the disruption loop up again failed; trying again after a pause")
			m = nil
		}
		backoff = min(2*backoff, maxLoopBackoff)
	}
}
