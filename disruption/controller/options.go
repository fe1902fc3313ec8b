package controller

import (
	"time"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/internal/karpenter/release"

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
	// Judged is the Karpenter release the loop judges by (karpgate.yaml's
	// karpenterVersion, or the cluster's CRDs, which may change while
	// serving): its disruption reasons are the lanes of the status,
	// metrics, events and /explain, and /status and /explain name it as
	// `karpgate status` and `karpgate explain` do. Default, nil: the
	// newest release's reasons (budget.Reasons), and no name.
	Judged func() release.Judged
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
	return o
}

// judged reads Judged once, so that the lanes a report lists and the
// release it names come from one decision however Judged changes: the
// reasons (nil: the newest release's) and the release as reports name it
// (nil when Judged is).
func (o Options) judged() ([]budget.Reason, *release.Summary) {
	if o.Judged == nil {
		return nil, nil
	}
	j := o.Judged()
	s := j.Summary()
	return budget.ReasonsOfJudged(j), &s
}
