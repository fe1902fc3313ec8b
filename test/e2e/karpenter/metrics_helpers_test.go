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

// poolReason names one series of an allowed-disruptions gauge.
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
				k.Reason = l.GetValue()
			}
		}
		out[k] = m.GetGauge().GetValue()
	}
	return out
}

// comparison is one pair of scrapes: karpgate's allowed disruptions, the
// counts they came from, and Karpenter's.
type comparison struct {
	karpgate, karpenter        map[poolReason]float64
	nodes, disrupting, invalid map[string]float64
}

func compareNow(c *localcluster.Cluster) (comparison, error) {
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
	return comparison{
		karpgate:   gauges(ours, "karpgate_nodepool_allowed_disruptions"),
		karpenter:  gauges(theirs, "karpenter_nodepools_allowed_disruptions"),
		nodes:      perPool("karpgate_nodepool_nodes"),
		disrupting: perPool("karpgate_nodepool_disrupting_nodes"),
		invalid:    perPool("karpgate_nodepool_invalid_budgets"),
	}, nil
}

// mismatches lists every NodePool and reason karpgate reports whose value
// Karpenter does not agree with. Karpenter writes its gauge as
// min(budgets) - disrupting, clamped to [0, MaxInt32], with MaxInt32 for a
// reason no active budget covers; where karpgate says unlimited (+Inf),
// Karpenter must say MaxInt32 minus the nodes disrupting. A NodePool whose
// budgets Karpenter cannot read gets no series from Karpenter at all (it
// allows it nothing); karpgate reports 0 and counts the invalid budgets.
func (c comparison) mismatches() []string {
	var out []string
	for k, ours := range c.karpgate {
		theirs, reported := c.karpenter[k]
		switch {
		case c.invalid[k.Pool] > 0:
			if ours != 0 || reported {
				out = append(out, fmt.Sprintf("%s: karpgate %v with invalid budgets, Karpenter %v (reported %v); want 0 and no series", k, ours, theirs, reported))
			}
		case !reported:
			out = append(out, fmt.Sprintf("%s: karpgate %v, Karpenter has no value yet", k, ours))
		case math.IsInf(ours, 1):
			if want := math.MaxInt32 - c.disrupting[k.Pool]; theirs != want {
				out = append(out, fmt.Sprintf("%s: karpgate unlimited, Karpenter %v (want MaxInt32-%v)", k, theirs, c.disrupting[k.Pool]))
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
	return c.karpgate[poolReason{pool, reason}]
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
