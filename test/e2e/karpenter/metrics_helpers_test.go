package karpentere2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/test/wait"
)

// scrape reads a Prometheus text endpoint.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %s %s", url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// poolReason names one series of an allowed-disruptions gauge. Reason is
// lower case: Karpenter v1.0.8 labels it as the API spells it (Drifted),
// later releases in lower case (drifted).
type poolReason struct{ Pool, Reason string }

func (k poolReason) String() string { return k.Pool + "/" + k.Reason }

// gauges returns a family's values by nodepool and reason label.
func gauges(families map[string]*dto.MetricFamily, name string) map[poolReason]float64 {
	out := map[poolReason]float64{}
	f := families[name]
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		var k poolReason
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "nodepool":
				k.Pool = l.GetValue()
			case "reason":
				k.Reason = strings.ToLower(l.GetValue())
			}
		}
		out[k] = m.GetGauge().GetValue()
	}
	return out
}

// budgetMetrics is how a Karpenter release exports its allowed disruptions
// (read from each release's pkg/controllers/disruption/helpers.go).
type budgetMetrics struct {
	// afterDisrupting: karpenter_nodepools_allowed_disruptions is the
	// budgets' minimum minus the nodes disrupting, clamped to [0, MaxInt32],
	// every reason computed together in each disruption cycle with a
	// candidate, and a NodePool whose budgets cannot be read gets no series
	// (v1.0.8). Otherwise the gauge is the budgets' minimum alone (MaxInt32
	// when no active budget covers the reason; 0 for unreadable budgets),
	// karpenter_nodepools_nodes_consuming_budgets{nodepool,reason} counts the
	// disrupting nodes beside it, and each reason is computed only in a
	// cycle where some node is a candidate for it (v1.15.0).
	afterDisrupting bool
	// unhealthyBudgets: budgets may name the Unhealthy reason, which paces
	// node repair (v1.15).
	unhealthyBudgets bool
}

var budgetMetricsOf = map[string]budgetMetrics{
	"v1.0.8":  {afterDisrupting: true},
	"v1.15.0": {afterDisrupting: false, unhealthyBudgets: true},
}

// comparison is one pair of scrapes: karpgate's allowed disruptions, the
// counts they came from, and Karpenter's, as allowed disruptions left after
// the nodes disrupting.
type comparison struct {
	metrics                    budgetMetrics
	karpgate, karpenter        map[poolReason]float64
	karpenterUnlimited         map[poolReason]bool
	nodes, disrupting, invalid map[string]float64
}

func compareNow(c *localcluster.Cluster) (comparison, error) {
	style, known := budgetMetricsOf[c.Release.Version]
	if !known {
		return comparison{}, fmt.Errorf("the test does not know how Karpenter %s exports its allowed disruptions: add it to budgetMetricsOf", c.Release)
	}
	ours, err := scrape(c.MetricsURL + "/metrics")
	if err != nil {
		return comparison{}, err
	}
	theirs, err := scrape(c.Karpenter.KarpenterMetricsURL)
	if err != nil {
		return comparison{}, err
	}
	perPool := func(name string) map[string]float64 {
		out := map[string]float64{}
		for k, v := range gauges(ours, name) {
			out[k.Pool] = v
		}
		return out
	}
	cmp := comparison{
		metrics:            style,
		karpgate:           gauges(ours, "karpgate_nodepool_allowed_disruptions"),
		karpenter:          map[poolReason]float64{},
		karpenterUnlimited: map[poolReason]bool{},
		nodes:              perPool("karpgate_nodepool_nodes"),
		disrupting:         perPool("karpgate_nodepool_disrupting_nodes"),
		invalid:            perPool("karpgate_nodepool_invalid_budgets"),
	}
	consuming := gauges(theirs, "karpenter_nodepools_nodes_consuming_budgets")
	for k, v := range gauges(theirs, "karpenter_nodepools_allowed_disruptions") {
		if style.afterDisrupting {
			cmp.karpenter[k] = v
			cmp.karpenterUnlimited[k] = v == math.MaxInt32-cmp.disrupting[k.Pool]
			continue
		}
		used, ok := consuming[k]
		if !ok {
			return comparison{}, fmt.Errorf("Karpenter %s exports %s's allowed disruptions without its nodes consuming budgets", c.Release, k)
		}
		cmp.karpenter[k] = max(v-used, 0)
		cmp.karpenterUnlimited[k] = v == math.MaxInt32
	}
	return cmp, nil
}

// mismatches lists every NodePool and reason karpgate reports whose value
// Karpenter does not agree with. Where karpgate says unlimited (+Inf),
// Karpenter must say no active budget covers the reason (budgetMetrics). A
// NodePool whose budgets Karpenter cannot read it allows nothing: karpgate
// reports 0 and counts the invalid budgets.
func (c comparison) mismatches() []string {
	var out []string
	for k, ours := range c.karpgate {
		theirs, reported := c.karpenter[k]
		switch {
		case c.invalid[k.Pool] > 0:
			if ours != 0 || (reported && (c.metrics.afterDisrupting || theirs != 0)) {
				out = append(out, fmt.Sprintf("%s: karpgate %v with invalid budgets, Karpenter %v (reported %v); want 0, and no series from a release that subtracts disrupting nodes", k, ours, theirs, reported))
			}
		case !reported:
			out = append(out, fmt.Sprintf("%s: karpgate %v, Karpenter has no value yet", k, ours))
		case math.IsInf(ours, 1):
			if !c.karpenterUnlimited[k] {
				out = append(out, fmt.Sprintf("%s: karpgate unlimited, Karpenter %v left (disrupting %v)", k, theirs, c.disrupting[k.Pool]))
			}
		case ours != theirs:
			out = append(out, fmt.Sprintf("%s: karpgate %v, Karpenter %v (disrupting %v)", k, ours, theirs, c.disrupting[k.Pool]))
		}
	}
	sort.Strings(out)
	return out
}

// value is karpgate's allowance for a pool and reason.
func (c comparison) value(pool, reason string) float64 {
	return c.karpgate[poolReason{pool, strings.ToLower(reason)}]
}

// karpgateStatus reads karpgate's /status of one NodePool.
func karpgateStatus(c *localcluster.Cluster, pool string) (status.NodePool, error) {
	resp, err := http.Get(c.MetricsURL + deploy.StatusPath + "?nodepool=" + pool)
	if err != nil {
		return status.NodePool{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return status.NodePool{}, fmt.Errorf("/status?nodepool=%s: %s %s", pool, resp.Status, body)
	}
	var r controller.StatusResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return status.NodePool{}, err
	}
	if len(r.NodePools) != 1 {
		return status.NodePool{}, fmt.Errorf("/status?nodepool=%s: %d NodePools", pool, len(r.NodePools))
	}
	return r.NodePools[0], nil
}

// counter sums a counter family's series whose labels include all of match.
func counter(families map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	sum := 0.0
	for _, m := range f.GetMetric() {
		if labelsMatch(m, match) {
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

func labelsMatch(m *dto.Metric, match map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := match[l.GetName()]; ok {
			if !strings.EqualFold(v, l.GetValue()) {
				return false
			}
			found++
		}
	}
	return found == len(match)
}

// waitFor polls check until it passes, and fails the test with check's
// last error once limit has passed. The limit bounds a broken run: drift
// rollouts take minutes, longer than wait.Patience.
func waitFor(t *testing.T, what string, limit time.Duration, check func() error) {
	t.Helper()
	if err := wait.Poll(limit, check); err != nil {
		t.Fatalf("%s: still not so after %s: %v", what, limit, err)
	}
}
