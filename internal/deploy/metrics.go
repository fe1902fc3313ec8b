package deploy

// How Prometheus reaches karpgate's metrics in a cluster. The ServiceMonitor,
// the scrape annotations and the metrics Service of the install manifests
// are built from these, so they follow any change of port or scheme.
const (
	// MetricsServiceName is the Service in front of the metrics port: a
	// Service of its own, so that the webhook Service keeps exposing only
	// what the API server calls.
	MetricsServiceName = Name + "-metrics"
	// MetricsPortName names the metrics port on the container and the
	// Service; ServiceMonitors select it by this name.
	MetricsPortName = "metrics"
	// MetricsPath is where the metrics server serves Prometheus' text format.
	MetricsPath = "/metrics"
	// MetricsScheme is what a scraper in the cluster speaks to the metrics
	// port: HTTPS with the serving certificate, a bearer token checked by
	// TokenReview and SubjectAccessReview (`karpgate serve --metrics-secure`).
	MetricsScheme = "https"
	// MetricsReaderRoleName is the ClusterRole that grants GET on /metrics
	// and /status; bind it to the scraper's service account.
	MetricsReaderRoleName = Name + "-metrics-reader"
)
