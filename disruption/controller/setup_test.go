package controller

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/metrics"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
	"github.com/karpgate/karpgate/internal/promreg"
)

func TestRequireKindsNamesWhatIsMissing(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{state.CoreV1, state.AWSV1})
	err := requireKinds(mapper)
	if err == nil || !strings.Contains(err.Error(), "NodePool (karpenter.sh/v1), NodeClaim (karpenter.sh/v1), EC2NodeClass (karpenter.k8s.aws/v1)") {
		t.Fatalf("err = %v", err)
	}
	mapper.Add(state.CoreV1.WithKind("NodePool"), meta.RESTScopeRoot)
	mapper.Add(state.CoreV1.WithKind("NodeClaim"), meta.RESTScopeRoot)
	if err := requireKinds(mapper); err == nil || strings.Contains(err.Error(), "NodePool") || !strings.Contains(err.Error(), "EC2NodeClass") {
		t.Fatalf("with two kinds served: err = %v", err)
	}
	mapper.Add(state.AWSV1.WithKind("EC2NodeClass"), meta.RESTScopeRoot)
	if err := requireKinds(mapper); err != nil {
		t.Fatalf("with every kind served: %v", err)
	}
}

func TestRequeueAfterPicksTheNearestReason(t *testing.T) {
	now := time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)
	at := func(d time.Duration) status.Change { t := now.Add(d); return status.Change{At: &t} }
	tests := []struct {
		name   string
		next   map[budget.Reason]status.Change
		wake   time.Time
		expect time.Duration
	}{
		{"nothing changes within the horizon", nil, time.Time{}, status.Horizon},
		{"the earliest window edge", map[budget.Reason]status.Change{budget.Drifted: at(30 * time.Minute), budget.Empty: at(2 * time.Hour)}, time.Time{}, 30 * time.Minute},
		{"a guard deadline comes first", map[budget.Reason]status.Change{budget.Drifted: at(30 * time.Minute)}, now.Add(5 * time.Minute), 5 * time.Minute},
		{"an edge already passed means now, not never", map[budget.Reason]status.Change{budget.Drifted: at(-time.Second)}, time.Time{}, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := requeueAfter(status.NodePool{NextChange: tt.next}, tt.wake, now); got != tt.expect {
				t.Errorf("requeueAfter = %s, want %s", got, tt.expect)
			}
		})
	}
}

// TestRegisterReplacesTheLastLoopsCollector: a loop set up again in the same
// process takes over the metrics instead of failing as a duplicate, and
// what is exported is the new loop's.
func TestRegisterReplacesTheLastLoopsCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	clk := clocktesting.NewFakeClock(monday0830)
	first, second := metrics.NewCollector(clk), metrics.NewCollector(clk)
	first.Set(status.NodePool{Name: "old"})
	second.Set(status.NodePool{Name: "new"})
	for i, c := range []prometheus.Collector{first, second} {
		if err := promreg.Replace(reg, c); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var pools []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "nodepool" && !slices.Contains(pools, l.GetValue()) {
					pools = append(pools, l.GetValue())
				}
			}
		}
	}
	if !slices.Equal(pools, []string{"new"}) {
		t.Errorf("exported NodePools %v, want only the second loop's [new]", pools)
	}
	if err := promreg.Replace(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "karpgate_nodepool_allowed_disruptions", Help: "clash"})); err == nil {
		t.Error("a different collector under a taken name was accepted")
	}
}
