package rolloutplan

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
)

var (
	phaseDesc = prometheus.NewDesc("karpgate_rolloutplan_phase",
		"1 for the phase the RolloutPlan is in (Idle, Rolling, Soaking, Paused, Failed, Aborted), 0 for the others.",
		[]string{"plan", "phase"}, nil)
	waveDesc = prometheus.NewDesc("karpgate_rolloutplan_current_wave",
		"1 for the wave that rolls, soaks or failed (the first wave while Idle), labelled with its index in spec.waves.",
		[]string{"plan", "wave", "index"}, nil)
	driftedDesc = prometheus.NewDesc("karpgate_rolloutplan_wave_drifted_nodeclaims",
		"NodeClaims of the wave's NodePools with drift the plan paces.",
		[]string{"plan", "wave"}, nil)
	replacedDesc = prometheus.NewDesc("karpgate_rolloutplan_wave_replaced_nodeclaims",
		"Drifted NodeClaims of the wave replaced since the wave started.",
		[]string{"plan", "wave"}, nil)
	heldDesc = prometheus.NewDesc("karpgate_rolloutplan_held_nodepools",
		"NodePools karpgate holds for the plan.",
		[]string{"plan"}, nil)
	gateDesc = prometheus.NewDesc("karpgate_rolloutplan_gate_failing",
		"1 while a gate of the plan's current wave fails (NodesReady, NodeClaimsLaunched, PodsReady), 0 while it passes or waits.",
		[]string{"plan", "wave", "gate"}, nil)
	soakDesc = prometheus.NewDesc("karpgate_rolloutplan_soak_end_timestamp_seconds",
		"When the current wave's soak ends, as a Unix time; absent when no wave soaks.",
		[]string{"plan", "wave"}, nil)
)

var phases = []v1alpha1.Phase{v1alpha1.PhaseIdle, v1alpha1.PhaseRolling, v1alpha1.PhaseSoaking, v1alpha1.PhasePaused, v1alpha1.PhaseFailed, v1alpha1.PhaseAborted}

// collector exports the last status written for each plan.
type collector struct {
	mu    sync.Mutex
	plans map[string]v1alpha1.RolloutPlanStatus
}

func newCollector() *collector { return &collector{plans: map[string]v1alpha1.RolloutPlanStatus{}} }

func (c *collector) set(plan string, st v1alpha1.RolloutPlanStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plans[plan] = *st.DeepCopy()
}

func (c *collector) delete(plan string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.plans, plan)
}

// Describe sends the descriptors.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{phaseDesc, waveDesc, driftedDesc, replacedDesc, heldDesc, gateDesc, soakDesc} {
		ch <- d
	}
}

// Collect sends every plan's series.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for plan, st := range c.plans {
		for _, p := range phases {
			gauge(phaseDesc, boolValue(st.Phase == p), plan, string(p))
		}
		gauge(heldDesc, float64(st.HeldNodePools), plan)
		for i, w := range st.Waves {
			gauge(driftedDesc, float64(w.Drifted), plan, w.Name)
			gauge(replacedDesc, float64(w.Replaced), plan, w.Name)
			if w.Name != st.CurrentWave {
				continue
			}
			gauge(waveDesc, 1, plan, w.Name, itoa(i))
			for _, g := range w.Gates {
				gauge(gateDesc, boolValue(g.Result == v1alpha1.GateFailing), plan, w.Name, g.Name)
			}
			if w.Phase == v1alpha1.WaveSoaking && w.SoakEndsAt != nil {
				gauge(soakDesc, float64(w.SoakEndsAt.Unix()), plan, w.Name)
			}
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func itoa(i int) string { return strconv.Itoa(i) }
