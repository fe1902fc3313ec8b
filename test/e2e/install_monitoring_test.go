package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/toolbin"
)

// chartMonitoringValues switch on everything the monitoring overlay has.
var chartMonitoringValues = []string{"--set", "monitoring.serviceMonitor.enabled=true", "--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.dashboard.enabled=true"}

var monitoringOverlay = rendering{name: "kustomize monitoring overlay", namespace: deploy.Namespace, want: withObjects(defaults, 32), args: func(kubectl, _, root string) []string {
	return []string{kubectl, "kustomize", filepath.Join(root, "manifests", "overlays", "monitoring")}
}}

var helmMonitoring = rendering{name: "helm with monitoring", namespace: deploy.Namespace, want: withObjects(defaults, 31), args: func(_, helm, root string) []string {
	return append([]string{helm, "template", "karpgate", filepath.Join(root, "manifests", "charts", "karpgate"), "--namespace", deploy.Namespace}, chartMonitoringValues...)
}}

// helmMonitoringVariant changes every monitoring value that has a template
// branch or a hole.
var helmMonitoringVariant = rendering{name: "helm monitoring values", namespace: "observed", want: withObjects(defaults, 32), args: func(_, helm, root string) []string {
	return append([]string{helm, "template", "karpgate", filepath.Join(root, "manifests", "charts", "karpgate"), "--namespace", "observed",
		"--set", "monitoring.scrapeAnnotations=false",
		"--set", "monitoring.serviceMonitor.interval=1m", "--set", "monitoring.serviceMonitor.labels.release=kube-prometheus-stack",
		"--set", "monitoring.serviceMonitor.insecureSkipVerify=true",
		"--set", "monitoring.prometheusServiceAccount.name=prometheus-k8s", "--set", "monitoring.prometheusServiceAccount.namespace=monitoring",
		"--set", "monitoring.prometheusRule.labels.role=alert-rules",
		"--set", "monitoring.prometheusRule.alerts.driftStuckFor=45m", "--set", "monitoring.prometheusRule.alerts.blockedFor=3d",
		// --set reads 0.5 as text; the schema wants a number, as --set-json gives.
		"--set-json", "monitoring.prometheusRule.alerts.denialsPerMinute=0.5", "--set-json", "monitoring.prometheusRule.alerts.errorRatio=0.01",
		"--set", "monitoring.prometheusRule.alerts.certificateExpiryDays=30",
		"--set", "monitoring.dashboard.labels.team=platform",
	}, chartMonitoringValues...)
}}

// checkMonitoringVariant: each changed value reaches its object, and the
// rules with the changed thresholds are still valid for promtool.
func checkMonitoringVariant(t *testing.T, objs []*manifest.Object) {
	t.Helper()
	var svc corev1.Service
	var sm monitoringv1.ServiceMonitor
	var rule monitoringv1.PrometheusRule
	var binding rbacv1.ClusterRoleBinding
	for _, o := range objs {
		var out any
		switch {
		case o.Kind() == "Service" && o.Name() == deploy.MetricsServiceName:
			out = &svc
		case o.Kind() == "ServiceMonitor":
			out = &sm
		case o.Kind() == "PrometheusRule":
			out = &rule
		case o.Kind() == "ClusterRoleBinding" && o.Name() == install.PrometheusBindingName:
			out = &binding
		case o.Kind() == "ConfigMap" && o.Name() == install.DashboardConfigMapName:
			var cm corev1.ConfigMap
			if err := json.Unmarshal(mustJSON(t, o.Content), &cm); err != nil {
				t.Fatal(err)
			}
			// Helm merges a map value into the default one.
			if cm.Labels["team"] != "platform" || cm.Labels["grafana_dashboard"] != "1" {
				t.Errorf("dashboard labels %v, want team=platform next to grafana_dashboard=1", cm.Labels)
			}
		}
		if out != nil {
			if err := json.Unmarshal(mustJSON(t, o.Content), out); err != nil {
				t.Fatalf("%s: %v", o.Ref(), err)
			}
		}
	}
	if len(svc.Annotations) != 0 {
		t.Errorf("scrape annotations %v with scrapeAnnotations=false", svc.Annotations)
	}
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("ServiceMonitor endpoints %+v", sm.Spec.Endpoints)
	}
	ep := sm.Spec.Endpoints[0]
	if ep.Interval != "1m" || sm.Labels["release"] != "kube-prometheus-stack" || ep.TLSConfig == nil ||
		ep.TLSConfig.InsecureSkipVerify == nil || !*ep.TLSConfig.InsecureSkipVerify || ep.TLSConfig.CA.Secret != nil || ep.TLSConfig.ServerName != nil {
		t.Errorf("ServiceMonitor labels %v endpoint %+v tls %+v", sm.Labels, ep, ep.TLSConfig)
	}
	if want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "monitoring"}}; !reflect.DeepEqual(binding.Subjects, want) || binding.RoleRef.Name != deploy.MetricsReaderClusterRole {
		t.Errorf("Prometheus binding %+v", binding)
	}
	if rule.Labels["role"] != "alert-rules" {
		t.Errorf("PrometheusRule labels %v", rule.Labels)
	}
	var exprs strings.Builder
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			exprs.WriteString(r.Expr.String() + "\n")
		}
	}
	for _, want := range []string{"[45m]", "offset 3d", "* 60 > 0.5", "> 0.01", "/ 86400 < 30"} {
		if !strings.Contains(exprs.String(), want) {
			t.Errorf("the changed thresholds do not reach the rules: no %q in\n%s", want, exprs.String())
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), mustJSON(t, rule.Spec), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, toolbin.Find(t, "KARPGATE_PROMTOOL", "promtool"), "check", "rules", "--lint=all", "--lint-fatal", filepath.Join(dir, "rules.yaml"))
}

// checkDashboardConfigMap: the dashboard in the ConfigMap is the JSON file
// shipped for import by hand.
func checkDashboardConfigMap(t *testing.T, objs []*manifest.Object, root string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(root, "manifests", "dashboards", "karpgate.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Kind() == "ConfigMap" && o.Name() == install.DashboardConfigMapName {
			data, _ := o.Content["data"].(map[string]any)
			if got, _ := data[install.DashboardKey].(string); got != string(want) {
				t.Errorf("ConfigMap %s carries another dashboard than manifests/dashboards/karpgate.json", o.Name())
			}
			return
		}
	}
	t.Errorf("no ConfigMap %s", install.DashboardConfigMapName)
}

// badValues are mistakes helm install must refuse, naming the value.
var badValues = []struct {
	name string
	set  string
	want string
}{
	{"a misspelled value", "replica=3", "additional properties 'replica' not allowed"},
	{"a misspelled nested value", "controller.rolloutGaurd=true", "at '/controller': additional properties 'rolloutGaurd' not allowed"},
	{"a number as text", "replicas=two", "at '/replicas': got string, want integer"},
	{"a failure policy in lower case", "webhooks.validating.failurePolicy=fail", "at '/webhooks/validating/failurePolicy': value must be one of 'Fail', 'Ignore'"},
	{"a timeout the API server refuses", "webhooks.mutating.timeoutSeconds=31", "at '/webhooks/mutating/timeoutSeconds': maximum: got 31, want 30"},
	{"a ratio as a percentage", "monitoring.prometheusRule.alerts.errorRatio=5", "at '/monitoring/prometheusRule/alerts/errorRatio': exclusiveMaximum: got 5, want 1"},
	{"a duration Prometheus cannot read", "monitoring.prometheusRule.alerts.driftStuckFor=2 hours", "at '/monitoring/prometheusRule/alerts/driftStuckFor'"},
}

// checkBadValues runs helm install against the cluster with each mistake:
// it must fail with the schema's message, before creating anything.
func checkBadValues(t *testing.T, env *testenv.Env, helm, root string) {
	t.Helper()
	home := t.TempDir()
	for _, bad := range badValues {
		t.Run(bad.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, helm, "install", "karpgate-bad", filepath.Join(root, "manifests", "charts", "karpgate"),
				"--namespace", "karpgate-bad", "--create-namespace", "--set", bad.set)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+env.KubeconfigPath, "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
				"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil || !strings.Contains(stderr.String(), "values don't meet the specifications of the schema") || !strings.Contains(stderr.String(), bad.want) {
				t.Fatalf("helm install --set %s: %v, want the schema's message with %q\n%s", bad.set, err, bad.want, stderr.String())
			}
		})
	}
	if res := env.Kubectl(nil, "get", "namespace", "karpgate-bad"); res.ExitCode == 0 {
		t.Error("a refused helm install created its namespace")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
