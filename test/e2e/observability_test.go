package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app/serve"
	"github.com/karpgate/karpgate/install"
	"github.com/karpgate/karpgate/install/dashboard"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	goldenfile "github.com/karpgate/karpgate/test/golden"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// targetLabels are the labels Prometheus adds to what it scrapes; the
// promtool tests' series carry them, karpgate's /metrics does not, apart
// from "endpoint" (the webhook metrics' path), which the ServiceMonitor
// keeps with honorLabels.
var targetLabels = []string{"instance", "job", "namespace", "pod", "service", "endpoint", "container"}

// honoredLabels are the target labels karpgate may export itself.
var honoredLabels = []string{"endpoint"}

// observabilityConfig lets the NodePool with an unparsable schedule of the
// disruption fixtures in with a warning, so the loop exports it.
const observabilityConfig = localcluster.RunConfig + `rules:
  KG201:
    actions: {admission: warn}
`

// TestObservabilityAgainstLiveMetrics runs karpgate as `make run` does, with
// the disruption loop and a policy that fails evaluation on purpose, and
// drives every kind of traffic a dashboard panel or an alert reads:
// NodePools with drift and an invalid budget, admission denials, warnings,
// mutations and errors, conversions that succeed and fail, a body over the
// limit and a refused reload. Then every selector of the dashboard and of
// the alert rules must select series from karpgate's /metrics, and every
// series of the promtool tests must have the name and label names of one.
func TestObservabilityAgainstLiveMetrics(t *testing.T) {
	// v1.0.8's CRDs: the conversion metrics need v1beta1 objects, which
	// only that release serves.
	env, cluster := testenv.StartKarpgate(t, localcluster.Options{
		Release:    karpenterstack.V1_0_8,
		Controller: true,
		Config:     observabilityConfig,
		PolicyDirs: []string{"../testdata/observability/policies"},
		Serve:      func(o *serve.Options) { o.ReloadInterval = 100 * time.Millisecond },
	})
	objs := readObjects(t, "disruption", "cluster.yaml")
	for _, o := range objs {
		// The fixtures are written against Karpenter v1.15.1's CRDs, which
		// default consolidateAfter; v1.0.8's, which make run serves,
		// require it.
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "disruption", "consolidateAfter"); o.GetKind() == "NodePool" && !found {
			if err := unstructured.SetNestedField(o.Object, "0s", "spec", "disruption", "consolidateAfter"); err != nil {
				t.Fatal(err)
			}
		}
	}
	createWithStatus(t, env.Client, objs)
	apply := func(file string, wantExit int, extra ...string) {
		t.Helper()
		if res := env.Kubectl(nil, append([]string{"apply", "-f", file}, extra...)...); res.ExitCode != wantExit {
			t.Fatalf("kubectl apply -f %s %v: exit %d, want %d\n%s", file, extra, res.ExitCode, wantExit, res.Stderr)
		}
	}
	apply("../../examples/ec2nodeclass-production-latest.yaml", 1) // deny
	apply("../../examples/ec2nodeclass-production-latest.yaml", 1, "--dry-run=server")
	apply("../testdata/admission/nodepool-name-only-ref.yaml", 0)               // mutate
	apply("../testdata/observability/nodepool-evaluation-error.yaml", 1)        // error
	apply("../../examples/nodepool-v1beta1.yaml", 0)                            // conversion
	env.MustKubectl(nil, "get", "nodepools.v1beta1.karpenter.sh", "-o", "name") // conversion to v1beta1
	postToWebhook(t, cluster, "/convert", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"karpenter.sh/v1","objects":["text"]}}`)
	postToWebhook(t, cluster, "/validate", strings.Repeat(" ", 4<<20)) // over --max-request-bytes
	refuseOneReload(t, cluster)
	// A RolloutPlan whose one wave is business, whose NodeClaims drifted:
	// the plan rolls, so its phase and its gates have series.
	env.MustKubectl(nil, "label", "nodepools.v1.karpenter.sh", "business", "karpgate-e2e/wave=observed")
	env.MustKubectl([]byte(`{"apiVersion":"karpgate.io/v1alpha1","kind":"RolloutPlan","metadata":{"name":"observed"},
"spec":{"waves":[{"name":"canary","nodePoolSelector":{"matchLabels":{"karpgate-e2e/wave":"observed"}}}]}}`), "apply", "-f", "-")

	var selectors []selectorUse
	for _, q := range dashboard.Queries(dashboard.New()) {
		expr, err := dashboard.WithSampleValues(q.Expr)
		if err != nil {
			t.Fatalf("dashboard %s: %v", q.Where, err)
		}
		selectors = append(selectors, selectorsOf(t, "dashboard "+q.Where, expr)...)
	}
	recorded := map[string]bool{}
	for _, g := range install.RuleGroups(install.Defaults().Monitoring.PrometheusRule.Alerts.Thresholds()) {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
			}
			selectors = append(selectors, selectorsOf(t, "rule "+r.Record+r.Alert, r.Expr.String())...)
		}
	}

	// The loop and the counters catch up asynchronously.
	var series []labels.Labels
	wait.ForNoError(t, "every selector to select series in karpgate's /metrics", func() error {
		series = scrapeSeries(t, cluster.MetricsURL)
		var unmatched []string
		for _, s := range selectors {
			if name := s.metricName(); !recorded[name] && !s.matchesAny(series) {
				unmatched = append(unmatched, s.String())
			}
		}
		if len(unmatched) > 0 {
			return fmt.Errorf("these select nothing:\n  %s", strings.Join(unmatched, "\n  "))
		}
		return nil
	})
	checkPromtoolSeries(t, series)
}

// selectorUse is one vector selector and where it was written.
type selectorUse struct {
	where    string
	matchers []*labels.Matcher
}

func (s selectorUse) metricName() string {
	for _, m := range s.matchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

func (s selectorUse) matchesAny(series []labels.Labels) bool {
	return slices.ContainsFunc(series, func(l labels.Labels) bool {
		for _, m := range s.matchers {
			if !m.Matches(l.Get(m.Name)) {
				return false
			}
		}
		return true
	})
}

func (s selectorUse) String() string {
	parts := make([]string, len(s.matchers))
	for i, m := range s.matchers {
		parts[i] = m.String()
	}
	return s.where + ": {" + strings.Join(parts, ", ") + "}"
}

// selectorsOf parses expr with Prometheus's parser and lists its selectors.
func selectorsOf(t *testing.T, where, expr string) []selectorUse {
	t.Helper()
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatalf("%s: %v\n%s", where, err, expr)
	}
	var out []selectorUse
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, selectorUse{where: where, matchers: vs.LabelMatchers})
		}
		return nil
	})
	if len(out) == 0 {
		t.Errorf("%s reads no series: %s", where, expr)
	}
	return out
}

// scrapeSeries reads /metrics as Prometheus stores it: one series per
// sample, histograms as _bucket (with le), _sum and _count.
func scrapeSeries(t *testing.T, metricsURL string) []labels.Labels {
	t.Helper()
	resp, err := http.Get(metricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	text := expfmt.NewTextParser(model.UTF8Validation)
	families, err := text.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []labels.Labels
	add := func(name string, m *dto.Metric, extra ...string) {
		b := labels.NewScratchBuilder(len(m.GetLabel()) + 2)
		b.Add(model.MetricNameLabel, name)
		for _, l := range m.GetLabel() {
			b.Add(l.GetName(), l.GetValue())
		}
		for i := 0; i+1 < len(extra); i += 2 {
			b.Add(extra[i], extra[i+1])
		}
		b.Sort()
		out = append(out, b.Labels())
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				for _, bucket := range m.GetHistogram().GetBucket() {
					add(name+"_bucket", m, "le", fmt.Sprint(bucket.GetUpperBound()))
				}
				add(name+"_bucket", m, "le", "+Inf")
				add(name+"_sum", m)
				add(name+"_count", m)
			case dto.MetricType_SUMMARY:
				add(name+"_sum", m)
				add(name+"_count", m)
				add(name, m)
			default:
				add(name, m)
			}
		}
	}
	return out
}

// checkPromtoolSeries: each input series of the promtool tests is named and
// labelled as a series karpgate serves, apart from the target labels.
func checkPromtoolSeries(t *testing.T, live []labels.Labels) {
	t.Helper()
	shapes := map[string]bool{}
	exported := map[string]map[string]bool{} // metric name -> its label names
	for _, l := range live {
		shapes[shapeOf(l)] = true
		name := l.Get(model.MetricNameLabel)
		if exported[name] == nil {
			exported[name] = map[string]bool{}
		}
		l.Range(func(lb labels.Label) {
			exported[name][lb.Name] = true
			if slices.Contains(targetLabels, lb.Name) && !slices.Contains(honoredLabels, lb.Name) {
				t.Errorf("karpgate exports %s with label %q, which Prometheus sets on every target: it would be renamed exported_%s", name, lb.Name, lb.Name)
			}
		})
	}
	files := goldenfile.Glob(t, "../../install/testdata/promtool/*.yaml")
	p := parser.NewParser(parser.Options{})
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests []struct {
				InputSeries []struct {
					Series string `yaml:"series"`
				} `yaml:"input_series"`
			} `yaml:"tests"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, test := range doc.Tests {
			for _, in := range test.InputSeries {
				l, err := p.ParseMetric(in.Series)
				if err != nil {
					t.Fatalf("%s: %s: %v", file, in.Series, err)
				}
				b := labels.NewBuilder(l)
				for _, target := range targetLabels {
					if !exported[l.Get(model.MetricNameLabel)][target] {
						b.Del(target)
					}
				}
				if shape := shapeOf(b.Labels()); !shapes[shape] {
					t.Errorf("%s: series %s: karpgate serves no %s", filepath.Base(file), in.Series, shape)
				}
			}
		}
	}
}

// shapeOf is a series' name and sorted label names.
func shapeOf(l labels.Labels) string {
	var names []string
	l.Range(func(lb labels.Label) {
		if lb.Name != model.MetricNameLabel {
			names = append(names, lb.Name)
		}
	})
	sort.Strings(names)
	return l.Get(model.MetricNameLabel) + "{" + strings.Join(names, ",") + "}"
}

func postToWebhook(t *testing.T, cluster *localcluster.Cluster, path, body string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cluster.CAPEM)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Post(cluster.WebhookURL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// refuseOneReload writes a karpgate.yaml karpgate refuses, waits until it
// has counted the failure, and puts the good one back.
func refuseOneReload(t *testing.T, cluster *localcluster.Cluster) {
	t.Helper()
	good, err := os.ReadFile(cluster.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile(t, cluster.ConfigPath, append(bytes.Clone(good), "rules: {KG101: {action: warn}}\n"...))
	wait.For(t, "the broken karpgate.yaml to be refused", func() bool {
		return metricValue(t, cluster.MetricsURL, `karpgate_config_reload_total{result="failure"}`) > 0
	})
	replaceFile(t, cluster.ConfigPath, good)
	wait.For(t, "the good karpgate.yaml to be back", func() bool {
		return metricValue(t, cluster.MetricsURL, `karpgate_config_last_reload_failed`) == 0 &&
			metricValue(t, cluster.MetricsURL, `karpgate_config_reload_total{result="success"}`) > 0
	})
}

// replaceFile puts content at path in one step, as a ConfigMap update does
// (a new file renamed over the old one). Writing in place truncates the
// file first, and a reload that polls in between reads an empty
// karpgate.yaml, which is a valid one: the built-in defaults.
func replaceFile(t *testing.T, path string, content []byte) {
	t.Helper()
	next := path + ".next"
	if err := os.WriteFile(next, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
}
