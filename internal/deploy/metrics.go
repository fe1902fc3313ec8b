package deploy

// How Prometheus reaches karpgate's metrics in a cluster, beside the port
// (MetricsPort, MetricsPortName), the scheme (MetricsScheme) and the
// ClusterRole a scraper needs (MetricsReaderClusterRole). The ServiceMonitor,
// the scrape annotations and the metrics Service of the install manifests
// are built from these, so they follow any change of port or scheme.
const (
	// MetricsServiceName is the Service in front of the metrics port: a
	// Service of its own, so that the webhook Service keeps exposing only
	// what the API server calls.
	MetricsServiceName = Name + "-metrics"
	// MetricsPath is where the metrics server serves Prometheus' text format.
	MetricsPath = "/metrics"
)
