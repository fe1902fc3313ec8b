package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Request latency per endpoint comes from controller-runtime, which wraps
// every registered route: controller_runtime_webhook_latency_seconds and
// controller_runtime_webhook_requests_total, labelled by path. These add
// what the limits do.
var (
	rejectedRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_webhook_rejected_requests_total",
		Help: "Requests turned away before their handler ran, by endpoint and reason (saturated, too_large, unreadable).",
	}, []string{"endpoint", "reason"})
	inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpgate_webhook_requests_in_flight",
		Help: "Requests holding one of the --max-concurrent-requests slots.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(rejectedRequests, inFlight)
}
