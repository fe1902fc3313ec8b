package policywatch

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_config_reload_total",
		Help: "Reloads of karpgate.yaml and the policy and data folders after they changed, by result (success, failure).",
	}, []string{"result"})
	lastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpgate_config_last_reload_success_timestamp_seconds",
		Help: "When the engine in use was compiled.",
	})
	lastFailed = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpgate_config_last_reload_failed",
		Help: "1 while the newest configuration or policies are rejected and an older engine is in use.",
	})
	degraded = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karpgate_config_degraded",
		Help: "1 while karpgate serves the last good configuration and policies, restored at start because the mounted ones do not compile.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(reloads, lastSuccess, lastFailed, degraded)
}
