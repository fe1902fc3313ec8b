package rolloutplan

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Options configure the controller. The zero value is the production
// default.
type Options struct {
	// Clock gives the time plans are judged at and drives the requeues at
	// soak ends. Default: the real clock.
	Clock clock.WithTicker
	// Registerer receives the metrics. Default: controller-runtime's.
	Registerer prometheus.Registerer
	// Name names the controller and its Events' reporting controller.
	Name string
	// Resync is the longest a rolling or soaking plan goes without being
	// judged again, for what no watch reports (a pod's readiness). Default
	// DefaultResync.
	Resync time.Duration
}

// Defaults.
const (
	DefaultName   = "karpgate-rolloutplan"
	DefaultResync = 30 * time.Second
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
	if o.Resync <= 0 {
		o.Resync = DefaultResync
	}
	return o
}
