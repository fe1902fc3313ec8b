package render

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/webhookconfig"
)

// chartMonitoringOptions are the monitoring options the chart's objects are
// built from: everything on, so that every object and field exists for a
// hole to switch, and no labels of its own, which the values add.
func chartMonitoringOptions(t *templater, m install.MonitoringOptions) install.MonitoringOptions {
	m.ScrapeAnnotations = true
	m.ServiceMonitor.Labels = nil
	m.ServiceMonitor.InsecureSkipVerify = false
	m.PrometheusRule.Labels = nil
	m.Dashboard.Labels = nil
	m.PrometheusServiceAccount = install.ServiceAccountRef{
		Name:      t.value("{{ .Values.monitoring.prometheusServiceAccount.name }}"),
		Namespace: t.value("{{ .Values.monitoring.prometheusServiceAccount.namespace }}"),
	}
	return m
}

// chartMonitoringObjects builds the monitoring objects with the alert
// thresholds as template expressions.
func chartMonitoringObjects(t *templater, helmOpts install.Options) ([]runtime.Object, error) {
	m, err := install.BuildMonitoring(helmOpts)
	if err != nil {
		return nil, err
	}
	const alerts = ".Values.monitoring.prometheusRule.alerts."
	m.PrometheusRule = install.PrometheusRule(helmOpts, install.AlertThresholds{
		DriftStuckFor:         t.value("{{ " + alerts + "driftStuckFor }}"),
		BlockedFor:            t.value("{{ " + alerts + "blockedFor }}"),
		FrozenFor:             t.value("{{ " + alerts + "frozenFor }}"),
		DenialsPerMinute:      t.value("{{ " + alerts + "denialsPerMinute }}"),
		ErrorRatio:            t.value("{{ " + alerts + "errorRatio }}"),
		CertificateExpiryDays: t.value("{{ " + alerts + "certificateExpiryDays }}"),
	})
	return []runtime.Object{m.MetricsService, m.ServiceMonitor, m.PrometheusBinding, m.PrometheusRule, m.Dashboard}, nil
}

// chartObjectConditions render an object, among others of its kind, only
// when its condition holds.
func chartObjectConditions() map[string]string {
	out := map[string]string{
		"ClusterRoleBinding/" + install.PrometheusBindingName: ".Values.monitoring.prometheusServiceAccount.name",
		"ConfigMap/" + install.DashboardConfigMapName:         ".Values.monitoring.dashboard.enabled",
	}
	for _, name := range webhookconfig.AdmissionPolicyParamsNames() {
		out["ConfigMap/"+name] = ".Values.admissionPolicy.enabled"
	}
	return out
}

// addLabels merges a labels value into an object's labels (at indentation
// 4, under metadata).
func addLabels(values string) string {
	return "{{- with " + values + " }}\n{{- toYaml . | nindent 4 }}\n{{- end }}"
}

func chartMonitoringHoles() []hole {
	const sm = ".Values.monitoring.serviceMonitor."
	tls := []string{"spec", "endpoints", "0", "tlsConfig"}
	at := func(rest ...string) []string { return append(append([]string{}, tls...), rest...) }
	return []hole{
		{kind: "Service", name: deploy.MetricsServiceName, path: []string{"metadata", "annotations"}, when: ".Values.monitoring.scrapeAnnotations"},
		{kind: "ServiceMonitor", path: []string{"metadata", "labels"}, add: addLabels(sm + "labels")},
		{kind: "ServiceMonitor", path: []string{"spec", "endpoints", "0", "interval"}, inline: "{{ " + sm + "interval | quote }}"},
		{kind: "ServiceMonitor", path: at("insecureSkipVerify"), inline: "{{ " + sm + "insecureSkipVerify }}"},
		{kind: "ServiceMonitor", path: at("ca"), when: "not " + sm + "insecureSkipVerify"},
		{kind: "ServiceMonitor", path: at("serverName"), when: "not " + sm + "insecureSkipVerify"},
		{kind: "PrometheusRule", path: []string{"metadata", "labels"}, add: addLabels(".Values.monitoring.prometheusRule.labels")},
		{kind: "ConfigMap", name: install.DashboardConfigMapName, path: []string{"metadata", "labels"}, add: addLabels(".Values.monitoring.dashboard.labels")},
	}
}
