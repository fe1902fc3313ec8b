package controller

import (
	"time"

	"github.com/karpgate/karpgate/budget"

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
	// Location is the time zone Events and /explain write times in
	// (karpgate.yaml's timezone, which may change while serving). Default:
	// UTC. Display only: budgets are computed in UTC.
	Location func() *time.Location
	// Reasons are the disruption reasons of the Karpenter release the loop
	// judges (karpgate.yaml's karpenterVersion, or the cluster's CRDs,
	// which may change while serving): the lanes of the status, metrics,
	// events and /explain. Default, or nil from the function: the newest
	// release's, budget.Reasons (Unhealthy included).
	Reasons func() []budget.Reason
	// Judged names that release for /status ("Karpenter v1.0.8 (CRDs in
	// cluster ...)"); nil leaves it out.
	Judged func() string
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
	// FreezeAfter trips a cluster-wide freeze when the guard holds this
	// many NodePools at once: every NodePool gets the freeze budget, as
	// `karpgate freeze --all` adds it, and only `karpgate resume` lifts it.
	// 0 (the default) never trips.
	FreezeAfter int
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
	if o.Location == nil {
		o.Location = func() *time.Location { return time.UTC }
	}
	if o.Reasons == nil {
		o.Reasons = func() []budget.Reason { return nil }
	}
	return o
}
