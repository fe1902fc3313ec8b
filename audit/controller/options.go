package controller

import (
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Options configure the audit. Engines is required; the zero value of the
// rest is the production default.
type Options struct {
	// Engines hands out the current engine (karpgate.yaml and policies as
	// last reloaded); a new engine starts a full audit.
	Engines Engines
	// Interval is the time between full audits besides those a reload
	// starts: what catches time passing (a waiver's expiry, budget
	// windows) and anything the events missed. Default: DefaultInterval.
	Interval time.Duration
	// EvaluationsPerSecond bounds how many objects are judged per second,
	// so that the audit leaves the webhooks their CPU. Default:
	// DefaultEvaluationsPerSecond.
	EvaluationsPerSecond float64
	// Workers judge objects at once. Default: DefaultWorkers.
	Workers int
	// NoReports turns the ClusterReports off; they are off anyway while
	// the openreports.io CRDs are not installed.
	NoReports bool
	// ReportWritesPerSecond bounds report writes. Default:
	// DefaultReportWritesPerSecond.
	ReportWritesPerSecond float64
	// ReportMaxBytes bounds one ClusterReport as JSON, ReportsPerObject
	// the reports an object's results other than its denials fill (see
	// report.Limits). Defaults: report.DefaultMaxBytes and
	// report.DefaultMaxReports.
	ReportMaxBytes, ReportsPerObject int
	// NoEvents turns the Events about new deny findings off;
	// EventsPerSecond bounds them (ten seconds' worth may come at once).
	// Default: DefaultEventsPerSecond.
	NoEvents        bool
	EventsPerSecond float64
	// CheckInterval is how often the audit looks for a reloaded engine and
	// for changes the cross-object rules must judge. Default: one second.
	CheckInterval time.Duration
	// Registerer receives the metrics. Default: controller-runtime's
	// registry, which karpgate serves on /metrics.
	Registerer prometheus.Registerer
	// Name names the audit in Events and logs. Default: DefaultName.
	Name string
	Log  logr.Logger
}

// Defaults.
const (
	DefaultName                  = "karpgate-audit"
	DefaultInterval              = 10 * time.Minute
	DefaultEvaluationsPerSecond  = 2000
	DefaultWorkers               = 2
	DefaultReportWritesPerSecond = 10
	DefaultEventsPerSecond       = 1
)

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.EvaluationsPerSecond <= 0 {
		o.EvaluationsPerSecond = DefaultEvaluationsPerSecond
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.ReportWritesPerSecond <= 0 {
		o.ReportWritesPerSecond = DefaultReportWritesPerSecond
	}
	if o.EventsPerSecond <= 0 {
		o.EventsPerSecond = DefaultEventsPerSecond
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = time.Second
	}
	if o.Registerer == nil {
		o.Registerer = ctrlmetrics.Registry
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	return o
}
