package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Options configure the loop. The zero value is the production default.
type Options struct {
	// Clock gives the time every status is computed at and drives the
	// requeues at window boundaries. Default: the real clock.
	Clock clock.WithTicker
	// Registerer receives the metrics. Default: controller-runtime's
	// metrics registry, which the manager serves on its metrics endpoint.
	Registerer prometheus.Registerer
	// Name names the controller, its queue and its events' reporting
	// controller. Default: DefaultName.
	Name string
	// Guard configures the rollout guard.
	Guard GuardOptions
}

// GuardOptions configure the rollout guard.
type GuardOptions struct {
	// Enabled lets the loop hold a drift rollout whose replacement nodes do
	// not become Ready. While it is false the loop lifts every hold the
	// guard placed, so turning the guard off in configuration releases all
	// NodePools it holds.
	Enabled bool
	// ReadyTimeout is how long a NodeClaim launched during a drift rollout
	// may go without a Ready Node. Default: DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// Defaults.
const (
	DefaultName         = "karpgate-disruption"
	DefaultReadyTimeout = 15 * time.Minute
)

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Registerer == nil {
		o.Registerer = ctrlmetrics.Registry
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Guard.ReadyTimeout <= 0 {
		o.Guard.ReadyTimeout = DefaultReadyTimeout
	}
	return o
}
