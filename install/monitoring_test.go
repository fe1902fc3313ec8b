package install

import (
	"encoding/json"
	"maps"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/karpgate/karpgate/internal/deploy"
)

// TestMetricsAreReachable follows the ServiceMonitor to the metrics Service,
// the Service to the container port, and the port to the number serve
// listens on; the scrape annotations name the same port, path and scheme.
func TestMetricsAreReachable(t *testing.T) {
	opts := Defaults()
	s, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildMonitoring(opts)
	if err != nil {
		t.Fatal(err)
	}
	svc, sm := m.MetricsService, m.ServiceMonitor
	if sel := labels.SelectorFromSet(sm.Spec.Selector.MatchLabels); !sel.Matches(labels.Set(svc.Labels)) {
		t.Fatalf("ServiceMonitor selector %v does not select Service %s labels %v", sm.Spec.Selector.MatchLabels, svc.Name, svc.Labels)
	}
	if sel := labels.SelectorFromSet(sm.Spec.Selector.MatchLabels); sel.Matches(labels.Set(s.Service.Labels)) {
		t.Errorf("ServiceMonitor selector %v also selects the webhook Service", sm.Spec.Selector.MatchLabels)
	}
	if got := sm.Spec.NamespaceSelector.MatchNames; len(got) != 1 || got[0] != svc.Namespace {
		t.Errorf("ServiceMonitor looks in %v, the Service is in %s", got, svc.Namespace)
	}
	if !maps.Equal(svc.Spec.Selector, s.Deployment.Spec.Selector.MatchLabels) {
		t.Errorf("metrics Service selects %v, the Deployment's pods carry %v", svc.Spec.Selector, s.Deployment.Spec.Selector.MatchLabels)
	}
	ep := sm.Spec.Endpoints[0]
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != ep.Port || ep.Port != deploy.MetricsPortName {
		t.Fatalf("ServiceMonitor port %q, Service ports %+v", ep.Port, svc.Spec.Ports)
	}
	containerPorts := map[string]int32{}
	for _, p := range s.Deployment.Spec.Template.Spec.Containers[0].Ports {
		containerPorts[p.Name] = p.ContainerPort
	}
	if got := containerPorts[svc.Spec.Ports[0].TargetPort.StrVal]; got != deploy.MetricsPort || svc.Spec.Ports[0].Port != deploy.MetricsPort {
		t.Errorf("metrics Service targets container port %q = %d, want %d", svc.Spec.Ports[0].TargetPort.StrVal, got, deploy.MetricsPort)
	}
	token := ep.BearerTokenFile //nolint:staticcheck // the ServiceMonitor sends Prometheus's own token
	if ep.Scheme.String() != deploy.MetricsScheme || ep.Path != deploy.MetricsPath || token != serviceAccountTokenPath {
		t.Errorf("ServiceMonitor endpoint %s %s, token %q", ep.Scheme.String(), ep.Path, token)
	}
	if !ep.HonorLabels {
		t.Error("ServiceMonitor without honorLabels: karpgate's label endpoint would become exported_endpoint")
	}
	if ep.TLSConfig == nil || ep.TLSConfig.CA.Secret == nil || ep.TLSConfig.CA.Secret.Name != deploy.CertSecretName ||
		*ep.TLSConfig.ServerName != ServiceDNSName(opts.Namespace) || *ep.TLSConfig.InsecureSkipVerify {
		t.Errorf("ServiceMonitor TLS %+v: want the CA of Secret %s and the serving certificate's name", ep.TLSConfig, deploy.CertSecretName)
	}
	want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/scheme": deploy.MetricsScheme,
		"prometheus.io/port": strconv.Itoa(deploy.MetricsPort), "prometheus.io/path": deploy.MetricsPath}
	if !maps.Equal(svc.Annotations, want) {
		t.Errorf("scrape annotations %v, want %v", svc.Annotations, want)
	}
}

func TestMonitoringOptionsReachTheObjects(t *testing.T) {
	tests := []struct {
		name   string
		change func(*MonitoringOptions)
		check  func(t *testing.T, m *Monitoring)
	}{
		{"defaults", func(*MonitoringOptions) {}, func(t *testing.T, m *Monitoring) {
			if m.PrometheusBinding != nil {
				t.Error("a ClusterRoleBinding for no service account")
			}
			var board map[string]any
			if err := json.Unmarshal([]byte(m.Dashboard.Data[DashboardKey]), &board); err != nil || board["uid"] != "karpgate" {
				t.Errorf("the dashboard ConfigMap carries no dashboard: %v", err)
			}
			if m.Dashboard.Labels["grafana_dashboard"] != "1" {
				t.Errorf("dashboard labels %v: Grafana's sidecar looks for grafana_dashboard", m.Dashboard.Labels)
			}
		}},
		{"choices", func(o *MonitoringOptions) {
			o.ScrapeAnnotations = false
			o.ServiceMonitor.Interval = "1m"
			o.ServiceMonitor.Labels = map[string]string{"release": "kube-prometheus-stack"}
			o.ServiceMonitor.InsecureSkipVerify = true
			o.PrometheusServiceAccount = ServiceAccountRef{Name: "prometheus-k8s", Namespace: "monitoring"}
			o.PrometheusRule.Labels = map[string]string{"role": "alert-rules"}
		}, func(t *testing.T, m *Monitoring) {
			if len(m.MetricsService.Annotations) != 0 {
				t.Errorf("scrape annotations %v, want none", m.MetricsService.Annotations)
			}
			ep := m.ServiceMonitor.Spec.Endpoints[0]
			if ep.Interval != "1m" || m.ServiceMonitor.Labels["release"] != "kube-prometheus-stack" || m.ServiceMonitor.Labels["app.kubernetes.io/name"] != deploy.Name {
				t.Errorf("ServiceMonitor interval %q labels %v", ep.Interval, m.ServiceMonitor.Labels)
			}
			if ep.TLSConfig.CA.Secret != nil || !*ep.TLSConfig.InsecureSkipVerify {
				t.Errorf("TLS %+v, want verification off and no CA", ep.TLSConfig)
			}
			b := m.PrometheusBinding
			if b == nil || b.RoleRef.Name != deploy.MetricsReaderClusterRole || b.Subjects[0].Name != "prometheus-k8s" || b.Subjects[0].Namespace != "monitoring" {
				t.Errorf("binding %+v", b)
			}
			if m.PrometheusRule.Labels["role"] != "alert-rules" {
				t.Errorf("PrometheusRule labels %v", m.PrometheusRule.Labels)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Defaults()
			tt.change(&opts.Monitoring)
			m, err := BuildMonitoring(opts)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, m)
		})
	}
}
