package serve

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
)

// swappable stands in for policywatch's watcher: the engine in use changes.
type swappable struct {
	current atomic.Pointer[policies.Engine]
}

func (s *swappable) Engine() *policies.Engine { return s.current.Load() }

func engineJudging(t *testing.T, version string) *policies.Engine {
	t.Helper()
	r, _, err := release.Lookup(version)
	if err != nil {
		t.Fatal(err)
	}
	j := release.ForCRDs(r.Facts.Schema, "CRDs in cluster test")
	e, err := policies.New(context.Background(), policies.Options{Karpenter: &j, SkipCostCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The gauge, the loop's lanes and the release /status and /explain name
// all follow the engine in use: after a swap, only the new release has a
// series.
func TestJudgedReleaseFollowsTheEngineInUse(t *testing.T) {
	engines := &swappable{}
	reg := prometheus.NewRegistry()
	reg.MustRegister(judgedInfo{engines})
	steps := []struct {
		version     string
		wantSeries  string
		wantReasons int
	}{
		{"v1.0.8", `karpgate_karpenter_judged_info{exact="true",source="CRDs in cluster test",version="v1.0.8"} 1`, 3},
		{"v1.15.1", `karpgate_karpenter_judged_info{exact="true",source="CRDs in cluster test",version="v1.15.1"} 1`, 4},
	}
	for _, s := range steps {
		engines.current.Store(engineJudging(t, s.version))
		want := "# HELP karpgate_karpenter_judged_info " + judgedInfoDescHelp + "\n# TYPE karpgate_karpenter_judged_info gauge\n" + s.wantSeries + "\n"
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "karpgate_karpenter_judged_info"); err != nil {
			t.Errorf("%s: %v", s.version, err)
		}
		j := loopJudged(engines)()
		if got := budget.ReasonsOfJudged(j); len(got) != s.wantReasons || (s.wantReasons == 3 && got[len(got)-1] == budget.Reason("Unhealthy")) {
			t.Errorf("%s: loop lanes %v", s.version, got)
		}
		if got := j.Summary().DescribeWithNote(); got != "Karpenter "+s.version+", exactly (CRDs in cluster test)" {
			t.Errorf("%s: /status and /explain name %q", s.version, got)
		}
	}
}
