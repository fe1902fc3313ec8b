package install

import (
	"fmt"
	"strconv"

	"github.com/prometheus/common/model"
)

// MonitoringOptions say how Prometheus and Grafana watch karpgate. The Helm
// chart takes them as the value "monitoring", field for field (the JSON
// names are the value names), so the values schema comes from this type.
type MonitoringOptions struct {
	// ScrapeAnnotations puts prometheus.io/scrape, /scheme, /port and /path
	// on the metrics Service, for Prometheus set-ups that find targets by
	// annotation rather than by ServiceMonitor.
	ScrapeAnnotations bool                  `json:"scrapeAnnotations"`
	ServiceMonitor    ServiceMonitorOptions `json:"serviceMonitor"`
	PrometheusRule    PrometheusRuleOptions `json:"prometheusRule"`
	Dashboard         DashboardOptions      `json:"dashboard"`
	// PrometheusServiceAccount, when its name is set, is bound to the
	// ClusterRole that may read /metrics: whichever way Prometheus finds
	// karpgate, it must send a token karpgate accepts.
	PrometheusServiceAccount ServiceAccountRef `json:"prometheusServiceAccount"`
}

// ServiceMonitorOptions configure the prometheus-operator ServiceMonitor.
type ServiceMonitorOptions struct {
	// Enabled needs the monitoring.coreos.com CRDs in the cluster.
	Enabled bool `json:"enabled"`
	// Interval between scrapes, a Prometheus duration.
	Interval string `json:"interval"`
	// Labels are added to the ServiceMonitor, for a Prometheus whose
	// serviceMonitorSelector wants some (release: kube-prometheus-stack).
	Labels map[string]string `json:"labels"`
	// InsecureSkipVerify scrapes without checking the serving certificate.
	// Only for a Secret karpgate-tls that carries no ca.crt: the bearer token
	// is then sent to whoever answers on the pod's address.
	InsecureSkipVerify bool `json:"insecureSkipVerify"`
}

// ServiceAccountRef names a service account in another namespace.
type ServiceAccountRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// PrometheusRuleOptions configure the prometheus-operator PrometheusRule.
type PrometheusRuleOptions struct {
	// Enabled needs the monitoring.coreos.com CRDs in the cluster.
	Enabled bool `json:"enabled"`
	// Labels are added to the PrometheusRule, for a Prometheus whose
	// ruleSelector wants some.
	Labels map[string]string `json:"labels"`
	Alerts AlertOptions      `json:"alerts"`
}

// AlertOptions are the alerts' thresholds.
type AlertOptions struct {
	// DriftStuckFor is how long the drifted NodeClaims of a NodePool may go
	// without decreasing, while its budgets allow drift disruptions, before
	// KarpgateDriftRolloutStuck fires. A Prometheus duration.
	DriftStuckFor string `json:"driftStuckFor"`
	// BlockedFor is how long a NodePool with nodes may allow no voluntary
	// disruption for any reason before KarpgateNodePoolDisruptionBlocked
	// fires. A Prometheus duration.
	BlockedFor string `json:"blockedFor"`
	// FrozenFor is how long drift may stay frozen in a NodePool (karpgate
	// freeze, or the rollout guard's cluster-wide trip) before
	// KarpgateDriftFrozen fires: a freeze forgotten stops every rollout,
	// AMI and security updates included. A Prometheus duration.
	FrozenFor string `json:"frozenFor"`
	// DenialsPerMinute is the rate of denials, per rule and averaged over 15
	// minutes, above which KarpgateAdmissionDenialsHigh fires.
	DenialsPerMinute float64 `json:"denialsPerMinute"`
	// ErrorRatio is the share of failed conversions, failed admission
	// evaluations or non-2xx answers above which the error alerts fire.
	ErrorRatio float64 `json:"errorRatio"`
	// CertificateExpiryDays: KarpgateServingCertificateExpiresSoon fires when
	// the certificate in use expires in fewer days.
	CertificateExpiryDays int32 `json:"certificateExpiryDays"`
}

// DashboardOptions configure the ConfigMap that carries the Grafana dashboard.
type DashboardOptions struct {
	Enabled bool `json:"enabled"`
	// Labels make Grafana's dashboard sidecar pick the ConfigMap up.
	Labels map[string]string `json:"labels"`
}

// DefaultMonitoring scrapes by annotation and leaves what needs the
// prometheus-operator CRDs, and the dashboard, to be switched on.
func DefaultMonitoring() MonitoringOptions {
	return MonitoringOptions{
		ScrapeAnnotations: true,
		ServiceMonitor:    ServiceMonitorOptions{Interval: "30s", Labels: map[string]string{}},
		PrometheusRule: PrometheusRuleOptions{Labels: map[string]string{}, Alerts: AlertOptions{
			// Karpenter replaces a drifted node within minutes when budgets
			// allow it; two hours without one replaced is no slow rollout.
			DriftStuckFor: "2h",
			BlockedFor:    "7d",
			// A freeze covers an incident or a change window, not weeks.
			FrozenFor:             "24h",
			DenialsPerMinute:      1,
			ErrorRatio:            0.05,
			CertificateExpiryDays: 14,
		}},
		// The label kube-prometheus-stack's Grafana sidecar looks for.
		Dashboard: DashboardOptions{Labels: map[string]string{"grafana_dashboard": "1"}},
	}
}

// AlertThresholds are the alert options as the PromQL text that goes into
// the rules; the Helm chart puts template expressions in their place.
type AlertThresholds struct {
	DriftStuckFor, BlockedFor, FrozenFor, DenialsPerMinute, ErrorRatio, CertificateExpiryDays string
}

// Thresholds formats the options for the rules.
func (a AlertOptions) Thresholds() AlertThresholds {
	return AlertThresholds{
		DriftStuckFor:         a.DriftStuckFor,
		BlockedFor:            a.BlockedFor,
		FrozenFor:             a.FrozenFor,
		DenialsPerMinute:      strconv.FormatFloat(a.DenialsPerMinute, 'g', -1, 64),
		ErrorRatio:            strconv.FormatFloat(a.ErrorRatio, 'g', -1, 64),
		CertificateExpiryDays: strconv.Itoa(int(a.CertificateExpiryDays)),
	}
}

func (m MonitoringOptions) validate() error {
	durations := []struct{ name, value string }{
		{"serviceMonitor.interval", m.ServiceMonitor.Interval},
		{"prometheusRule.alerts.driftStuckFor", m.PrometheusRule.Alerts.DriftStuckFor},
		{"prometheusRule.alerts.blockedFor", m.PrometheusRule.Alerts.BlockedFor},
		{"prometheusRule.alerts.frozenFor", m.PrometheusRule.Alerts.FrozenFor},
	}
	for _, d := range durations {
		if v, err := model.ParseDuration(d.value); err != nil || v <= 0 {
			return fmt.Errorf("install options: monitoring.%s %q: want a Prometheus duration such as 30s, 2h or 7d", d.name, d.value)
		}
	}
	a := m.PrometheusRule.Alerts
	switch {
	case a.DenialsPerMinute <= 0:
		return fmt.Errorf("install options: monitoring.prometheusRule.alerts.denialsPerMinute %v: want a rate above 0", a.DenialsPerMinute)
	case a.ErrorRatio <= 0 || a.ErrorRatio >= 1:
		return fmt.Errorf("install options: monitoring.prometheusRule.alerts.errorRatio %v: want a share between 0 and 1, such as 0.05", a.ErrorRatio)
	case a.CertificateExpiryDays < 1:
		return fmt.Errorf("install options: monitoring.prometheusRule.alerts.certificateExpiryDays %d: want 1 or more", a.CertificateExpiryDays)
	}
	if sa := m.PrometheusServiceAccount; (sa.Name == "") != (sa.Namespace == "") {
		return fmt.Errorf("install options: monitoring.prometheusServiceAccount %+v: set both name and namespace, or neither", sa)
	}
	return nil
}
