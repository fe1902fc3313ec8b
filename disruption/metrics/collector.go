package metrics

import (
	"math"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/status"
)

var (
	poolLabels       = []string{"nodepool"}
	poolReasonLabels = []string{"nodepool", "reason"}

	allowedDesc = prometheus.NewDesc("karpgate_nodepool_allowed_disruptions",
		"Voluntary disruptions a reason allows now: the binding budget minus the nodes using it up; +Inf when no active budget covers the reason, 0 when invalid budgets block every reason. One series per reason of the Karpenter release judged (Unhealthy, node repair, from v1.15).",
		poolReasonLabels, nil)
	budgetNodesDesc = prometheus.NewDesc("karpgate_nodepool_budget_nodes",
		"Nodes the binding budget lets a reason disrupt at once, before the nodes using it up are subtracted (what Karpenter v1.15 exports as karpenter_nodepools_allowed_disruptions); +Inf when no active budget covers the reason, 0 when invalid budgets block every reason.",
		poolReasonLabels, nil)
	consumingDesc = prometheus.NewDesc("karpgate_nodepool_budget_consuming_nodes",
		"Counted nodes using up a reason's budget: deleting, marked for disruption, rebooting, or not Ready (except for Unhealthy: Karpenter v1.15 does not count nodes that are only not Ready against node repair).",
		poolReasonLabels, nil)
	nextChangeDesc = prometheus.NewDesc("karpgate_nodepool_allowed_disruptions_next_change_seconds",
		"Seconds until the reason's allowance next changes as budget windows open or close; +Inf when it does not change within 7 days.",
		poolReasonLabels, nil)
	nodesDesc = prometheus.NewDesc("karpgate_nodepool_nodes",
		"Nodes the NodePool's budgets are computed from: initialized, with a NodeClaim whose instance is not terminating.",
		poolLabels, nil)
	disruptingDesc = prometheus.NewDesc("karpgate_nodepool_disrupting_nodes",
		"Counted nodes already disrupting (NotReady, deleting, rebooting or tainted karpenter.sh/disrupted); they reduce the allowance of every reason but Unhealthy, which only the ones not merely NotReady reduce.",
		poolLabels, nil)
	unhealthyDesc = prometheus.NewDesc("karpgate_nodepool_unhealthy_nodes",
		"Nodes of the NodePool, initialized or not, whose Ready condition is False or Unknown: what node repair (Karpenter v1.15) acts on. Absent for a release without node repair.",
		poolLabels, nil)
	repairStoppedDesc = prometheus.NewDesc("karpgate_nodepool_repair_stopped",
		"1 while more than 20% (rounded up) of the NodePool's nodes are unhealthy, so Karpenter v1.15 repairs none of them. Absent for a release without node repair.",
		poolLabels, nil)
	invalidDesc = prometheus.NewDesc("karpgate_nodepool_invalid_budgets",
		"Budgets that make Karpenter allow zero voluntary disruptions of the NodePool for every reason.",
		poolLabels, nil)
	driftedDesc = prometheus.NewDesc("karpgate_nodepool_drifted_nodeclaims",
		"NodeClaims whose Drifted condition is True, by the condition's reason.",
		poolReasonLabels, nil)
	oldestDriftDesc = prometheus.NewDesc("karpgate_nodepool_oldest_drift_age_seconds",
		"Seconds since the longest-drifted NodeClaim became Drifted; absent when none is drifted.",
		poolLabels, nil)
	willDriftDesc = prometheus.NewDesc("karpgate_nodepool_will_drift_nodeclaims",
		"NodeClaims whose image is no longer the newest compatible AMI of their EC2NodeClass, not yet marked Drifted.",
		poolLabels, nil)
	doNotDisruptDesc = prometheus.NewDesc("karpgate_nodepool_do_not_disrupt_nodes",
		"Counted nodes annotated karpenter.sh/do-not-disrupt=true.",
		poolLabels, nil)
	podBlockedDesc = prometheus.NewDesc("karpgate_nodepool_drift_blocked_by_pods_nodes",
		"Drifted nodes whose pods block eviction (a karpenter.sh/do-not-disrupt pod, or a PodDisruptionBudget that allows no disruption) and whose NodeClaim has no terminationGracePeriod: the rollout cannot replace them.",
		poolLabels, nil)
	guardDesc = prometheus.NewDesc("karpgate_nodepool_rollout_guard_held",
		"1 while karpgate's rollout guard holds the NodePool's drift rollout.",
		poolLabels, nil)
	frozenDesc = prometheus.NewDesc("karpgate_nodepool_drift_frozen",
		"1 while a freeze (karpgate freeze, or the rollout guard's cluster-wide trip) holds the NodePool's drift disruptions at zero.",
		poolLabels, nil)
)

// Collector holds the latest status of every NodePool. It is safe for
// concurrent use.
type Collector struct {
	clock clock.PassiveClock
	mu    sync.RWMutex
	pools map[string]status.NodePool
}

// NewCollector returns an empty collector reading the time from clk.
func NewCollector(clk clock.PassiveClock) *Collector {
	return &Collector{clock: clk, pools: map[string]status.NodePool{}}
}

// Set records the status of a NodePool.
func (c *Collector) Set(p status.NodePool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pools[p.Name] = p
}

// Delete forgets a NodePool, so its series disappear.
func (c *Collector) Delete(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pools, name)
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{allowedDesc, budgetNodesDesc, consumingDesc, nextChangeDesc, nodesDesc, disruptingDesc, invalidDesc,
		unhealthyDesc, repairStoppedDesc, driftedDesc, oldestDriftDesc, willDriftDesc, doNotDisruptDesc, podBlockedDesc, guardDesc, frozenDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	now := c.clock.Now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	for name, p := range c.pools {
		gauge := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{name}, labels...)...)
		}
		counts := p.Counts()
		for _, r := range p.Lanes() {
			gauge(allowedDesc, allowedValue(p.Allowed[r]), string(r))
			gauge(budgetNodesDesc, limitValue(p.Allowed[r]), string(r))
			gauge(consumingDesc, float64(counts.Consuming(r)), string(r))
			next := math.Inf(1)
			if at := p.NextChange[r].At; at != nil {
				next = math.Max(at.Sub(now).Seconds(), 0)
			}
			gauge(nextChangeDesc, next, string(r))
		}
		gauge(nodesDesc, float64(p.Nodes))
		gauge(disruptingDesc, float64(p.Disrupting))
		gauge(invalidDesc, float64(len(p.Invalid)))
		if p.Repair != nil {
			gauge(unhealthyDesc, float64(p.Repair.Unhealthy))
			gauge(repairStoppedDesc, boolValue(p.Repair.Stopped))
		}
		for reason, n := range p.Drift.ByReason {
			gauge(driftedDesc, float64(n), reason)
		}
		if p.Drift.OldestSince != nil {
			gauge(oldestDriftDesc, math.Max(now.Sub(*p.Drift.OldestSince).Seconds(), 0))
		}
		gauge(willDriftDesc, float64(len(p.WillDrift.Pending)))
		gauge(doNotDisruptDesc, float64(p.DoNotDisrupt))
		gauge(podBlockedDesc, float64(p.DriftBlockedByPods))
		gauge(guardDesc, boolValue(p.Guard.Held && !p.Guard.Frozen))
		gauge(frozenDesc, boolValue(p.Guard.Frozen))
	}
}

func allowedValue(a budget.Allowance) float64 {
	switch {
	case a.Blocked:
		return 0
	case a.Unlimited:
		return math.Inf(1)
	default:
		return float64(a.Count)
	}
}

// limitValue is the binding budgets' node count, as Karpenter v1.15
// exports it before subtracting the nodes using it up.
func limitValue(a budget.Allowance) float64 {
	switch {
	case a.Blocked:
		return 0
	case a.Unlimited:
		return math.Inf(1)
	default:
		return float64(a.Limit)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
