package webhook

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karpgate/karpgate/internal/serving"
)

// Request latency per endpoint comes from controller-runtime, which wraps
// every registered route: controller_runtime_webhook_latency_seconds and
// controller_runtime_webhook_requests_total, labelled by path. These add
// what the limits do. Every label value is a registered path or a fixed
// word, never something a client sent.
var (
	rejectedRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_webhook_rejected_requests_total",
		Help: "Requests turned away before their handler ran, by endpoint and reason (saturated, source, too_large, too_wide, chunked, unauthenticated, timeout, unreadable).",
	}, []string{"endpoint", "reason"})
	inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpgate_webhook_requests_in_flight",
		Help: "Requests whose handler is running.",
	})
	reservedBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpgate_webhook_reserved_memory_bytes",
		Help: "Memory charged to requests in flight (the body read so far, in doubling chunks, times the route's memory factor, and the per-value charge), out of the budget --memory-limit leaves for requests.",
	})
	closedConnections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_webhook_closed_connections_total",
		Help: "Connections the webhook listener closed to make room or refused, by reason: idle (the connection idle the longest, for a new one), source (a client address at its share of strangers' connections, none of them idle), unverified (strangers' connections, without a verified client certificate or a trusted address, at their cap, none idle), full (every connection busy).",
	}, []string{"reason"})
	openConnections = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "karpgate_webhook_open_connections",
		Help: "Connections the webhook listener holds open.",
	}, func() float64 {
		if l := servingListener.Load(); l != nil {
			return float64(l.Open())
		}
		return 0
	})
	// servingListener is the webhook listener the gauge reads: the one
	// karpgate serve runs (the last one started, in tests).
	servingListener atomic.Pointer[serving.Listener]
	panics          = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_webhook_panics_total",
		Help: "Handler panics turned into 500 responses, by endpoint; the panic and its stack are logged.",
	}, []string{"endpoint"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(rejectedRequests, inFlight, reservedBytes, closedConnections, openConnections, panics)
	for _, reason := range []string{"idle", "source", "unverified", "full"} {
		closedConnections.WithLabelValues(reason)
	}
}
