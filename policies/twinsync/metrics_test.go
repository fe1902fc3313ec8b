package twinsync_test

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karpgate/karpgate/config"
)

// family gathers one metric family from the registry karpgate serve's
// /metrics exposes; nil when it has no series.
func family(t *testing.T, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// syncCount is karpgate_admission_policy_syncs_total{result}. The counters
// are the process's, so tests compare before and after.
func syncCount(t *testing.T, result string) float64 {
	t.Helper()
	for _, m := range family(t, "karpgate_admission_policy_syncs_total").GetMetric() {
		if label(m, "result") == result {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// twinGauge is every series of karpgate_admission_policy_twin: rule ->
// action -> value.
func twinGauge(t *testing.T) map[string]map[config.Action]float64 {
	t.Helper()
	out := map[string]map[config.Action]float64{}
	for _, m := range family(t, "karpgate_admission_policy_twin").GetMetric() {
		rule := label(m, "rule")
		if out[rule] == nil {
			out[rule] = map[config.Action]float64{}
		}
		out[rule][config.Action(label(m, "action"))] = m.GetGauge().GetValue()
	}
	return out
}

// checkGauge asserts one series per switched-on twin, at its action, 1
// exactly for the covered ones.
func checkGauge(t *testing.T, on, covered map[string]config.Action) {
	t.Helper()
	got := twinGauge(t)
	for rule, action := range on {
		want := 0.0
		if covered[rule] == action {
			want = 1
		}
		if v, ok := got[rule][action]; !ok || v != want || len(got[rule]) != 1 {
			t.Errorf("karpgate_admission_policy_twin{rule=%q} = %v; want one series, action=%q, value %v", rule, got[rule], action, want)
		}
	}
	for rule := range got {
		if _, ok := on[rule]; !ok {
			t.Errorf("karpgate_admission_policy_twin has a series for %s, which karpgate.yaml does not switch on: %v", rule, got[rule])
		}
	}
}
