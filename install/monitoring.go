package install

import (
	"maps"
	"strconv"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/install/dashboard"
	"github.com/karpgate/karpgate/internal/deploy"
)

// Monitoring objects' names.
const (
	PrometheusRuleName = deploy.Name
	ServiceMonitorName = deploy.Name
	// DashboardConfigMapName carries the Grafana dashboard under DashboardKey.
	DashboardConfigMapName = deploy.Name + "-dashboard"
	DashboardKey           = "karpgate.json"
	// PrometheusBindingName binds the Prometheus service account named in
	// the options to the metrics reader ClusterRole.
	PrometheusBindingName = deploy.MetricsReaderClusterRole + "-prometheus"
)

// MetricsComponentLabel tells the metrics Service from the webhook Service,
// for the ServiceMonitor's selector.
var MetricsComponentLabel = map[string]string{"app.kubernetes.io/component": "metrics"}

// serviceAccountTokenPath is where Prometheus finds its own service
// account token: the ServiceMonitor sends it, and karpgate checks it with a
// TokenReview and a SubjectAccessReview.
const serviceAccountTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// Monitoring is what Prometheus and Grafana need to watch karpgate. Every
// install has the metrics Service; the kustomize component carries the
// rest, and the chart renders each part when its value enables it.
// PrometheusBinding is nil without a Prometheus service account in the
// options.
type Monitoring struct {
	MetricsService    *corev1.Service
	ServiceMonitor    *monitoringv1.ServiceMonitor
	PrometheusBinding *rbacv1.ClusterRoleBinding
	PrometheusRule    *monitoringv1.PrometheusRule
	Dashboard         *corev1.ConfigMap
}

// BuildMonitoring makes the monitoring objects of an install.
func BuildMonitoring(opts Options) (*Monitoring, error) {
	if err := opts.Monitoring.validate(); err != nil {
		return nil, err
	}
	board, err := dashboard.JSON()
	if err != nil {
		return nil, err
	}
	m := &Monitoring{
		MetricsService: metricsService(opts),
		ServiceMonitor: serviceMonitor(opts),
		PrometheusRule: PrometheusRule(opts, opts.Monitoring.PrometheusRule.Alerts.Thresholds()),
		Dashboard:      dashboardConfigMap(opts, board),
	}
	if sa := opts.Monitoring.PrometheusServiceAccount; sa.Name != "" {
		m.PrometheusBinding = prometheusBinding(sa)
	}
	return m, nil
}

// ScrapeAnnotations are the prometheus.io annotations that annotation-based
// Prometheus configurations read.
func ScrapeAnnotations() map[string]string {
	return map[string]string{
		"prometheus.io/scrape": "true",
		"prometheus.io/scheme": deploy.MetricsScheme,
		"prometheus.io/port":   strconv.Itoa(deploy.MetricsPort),
		"prometheus.io/path":   deploy.MetricsPath,
	}
}

func metricsService(opts Options) *corev1.Service {
	meta := objectMeta(deploy.MetricsServiceName, opts.Namespace)
	maps.Copy(meta.Labels, MetricsComponentLabel)
	if opts.Monitoring.ScrapeAnnotations {
		meta.Annotations = ScrapeAnnotations()
	}
	return &corev1.Service{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Service"),
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: maps.Clone(SelectorLabels),
			Ports: []corev1.ServicePort{{
				Name:       deploy.MetricsPortName,
				Port:       deploy.MetricsPort,
				TargetPort: intstr.FromString(deploy.MetricsPortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

func serviceMonitor(opts Options) *monitoringv1.ServiceMonitor {
	o := opts.Monitoring.ServiceMonitor
	meta := objectMeta(ServiceMonitorName, opts.Namespace)
	maps.Copy(meta.Labels, o.Labels)
	selector := maps.Clone(SelectorLabels)
	maps.Copy(selector, MetricsComponentLabel)
	// The serving certificate names the webhook Service; the CA that signed
	// it is in the same Secret when cert-manager issued it.
	tlsConfig := &monitoringv1.TLSConfig{SafeTLSConfig: monitoringv1.SafeTLSConfig{
		CA: monitoringv1.SecretOrConfigMap{Secret: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: deploy.CertSecretName},
			Key:                  "ca.crt",
		}},
		ServerName:         ptr.To(ServiceDNSName(opts.Namespace)),
		InsecureSkipVerify: ptr.To(false),
	}}
	if o.InsecureSkipVerify {
		tlsConfig = &monitoringv1.TLSConfig{SafeTLSConfig: monitoringv1.SafeTLSConfig{InsecureSkipVerify: ptr.To(true)}}
	}
	endpoint := monitoringv1.Endpoint{
		Port:     deploy.MetricsPortName,
		Path:     deploy.MetricsPath,
		Scheme:   ptr.To(monitoringv1.Scheme(deploy.MetricsScheme)),
		Interval: monitoringv1.Duration(o.Interval),
		// Prometheus's own token: no Secret to create or rotate, and the
		// only way to send it (authorization needs a Secret). Operators
		// that forbid file access from ServiceMonitors
		// (arbitraryFSAccessThroughSMs) need a Secret and authorization.
		BearerTokenFile: serviceAccountTokenPath, //nolint:staticcheck // deprecated for Secrets, which this must not need
		// karpgate's webhook metrics carry a label "endpoint" (the path),
		// which is also the target label prometheus-operator adds (the
		// port name): without honorLabels Prometheus would rename karpgate's
		// to exported_endpoint and every query by endpoint would read
		// "metrics". karpgate exports no other target label.
		HonorLabels: true,
	}
	endpoint.TLSConfig = tlsConfig
	return &monitoringv1.ServiceMonitor{
		TypeMeta:   typeMeta(monitoringv1.SchemeGroupVersion, monitoringv1.ServiceMonitorsKind),
		ObjectMeta: meta,
		Spec: monitoringv1.ServiceMonitorSpec{
			Selector:          metav1.LabelSelector{MatchLabels: selector},
			NamespaceSelector: monitoringv1.NamespaceSelector{MatchNames: []string{opts.Namespace}},
			Endpoints:         []monitoringv1.Endpoint{endpoint},
		},
	}
}

func prometheusBinding(sa ServiceAccountRef) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion, "ClusterRoleBinding"),
		ObjectMeta: objectMeta(PrometheusBindingName, ""),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: deploy.MetricsReaderClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
	}
}

// PrometheusRule carries karpgate's recording and alerting rules with the
// given thresholds (the chart passes template expressions).
func PrometheusRule(opts Options, t AlertThresholds) *monitoringv1.PrometheusRule {
	meta := objectMeta(PrometheusRuleName, opts.Namespace)
	maps.Copy(meta.Labels, opts.Monitoring.PrometheusRule.Labels)
	return &monitoringv1.PrometheusRule{
		TypeMeta:   typeMeta(monitoringv1.SchemeGroupVersion, monitoringv1.PrometheusRuleKind),
		ObjectMeta: meta,
		Spec:       monitoringv1.PrometheusRuleSpec{Groups: RuleGroups(t)},
	}
}

func dashboardConfigMap(opts Options, board []byte) *corev1.ConfigMap {
	meta := objectMeta(DashboardConfigMapName, opts.Namespace)
	maps.Copy(meta.Labels, opts.Monitoring.Dashboard.Labels)
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "ConfigMap"),
		ObjectMeta: meta,
		Data:       map[string]string{DashboardKey: string(board)},
	}
}
