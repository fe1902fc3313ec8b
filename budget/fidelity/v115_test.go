package fidelity

import (
	"math"
	"runtime/debug"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karpgate/karpgate/budget"
)

// The seeded comparison: 40 NodePools of random budgets over the four
// reasons of v1.15, each asked at 12 instants, 480 instants in all (the
// issue's measure). The seed is fixed so that a failure reproduces.
const (
	seed             = 29
	pools            = 40
	instantsPerPool  = 12
	linkedKarpenter  = "sigs.k8s.io/karpenter"
	expectedVersion  = "v1.15.0"
	karpenterV1_15_0 = "Karpenter v1.15.0"
)

// TestLinksKarpenterV1_15_0 makes sure the comparisons ask the release
// they claim to: go.mod pins sigs.k8s.io/karpenter to v1.15.0 (the AWS
// provider v1.15.1 requires a core v1.15.1 the Go module proxy does not
// serve).
func TestLinksKarpenterV1_15_0(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information in the test binary")
	}
	for _, dep := range info.Deps {
		if dep.Path != linkedKarpenter {
			continue
		}
		version := dep.Version
		if dep.Replace != nil {
			version = dep.Replace.Version
		}
		if version != expectedVersion {
			t.Errorf("the tests link %s %s, want %s", linkedKarpenter, version, expectedVersion)
		}
		return
	}
	t.Errorf("the test binary does not link %s", linkedKarpenter)
}

func TestAllowedMatchesKarpenterV1_15(t *testing.T) {
	tl := newTally(budget.Reasons)
	for _, c := range generate(seed, budget.Reasons, pools, instantsPerPool) {
		tl.add(c, karpgateAllows(t, budget.Reasons, c), karpenterV1_15(t, c))
	}
	tl.check(t, karpenterV1_15_0)
}

// FuzzAllowedMatchesKarpenterV1_15 compares one written budget and one
// always-active budget, at any instant and node count, for the four reasons.
func FuzzAllowedMatchesKarpenterV1_15(f *testing.F) {
	f.Add("0", "0 9 * * mon-fri", "8h", uint8(3), uint8(0b0100), "10%", uint8(0b1000), uint16(21), int64(1736157600))
	f.Add("10%", "0 9 * * sat-sun", "24h", uint8(3), uint8(0b10000), "1", uint8(0b100000), uint16(3), int64(1736150400))
	f.Add("4294967297", "@daily", "1h", uint8(3), uint8(0b1001), "150%", uint8(0b10000), uint16(7), int64(1767225600))
	f.Add("25%", "", "1h", uint8(2), uint8(0b0001), "0", uint8(0b1000), uint16(0), int64(0))
	f.Add("ten", "0 0 30 2 *", "30m", uint8(3), uint8(0b1000), "-1", uint8(0b0010), uint16(200), int64(1999999999))
	f.Fuzz(func(t *testing.T, nodes, schedule, duration string, present, reasons uint8, nodes2 string, reasons2 uint8, count uint16, unix int64) {
		b := fbudget{Nodes: nodes, Reasons: reasonsOf(reasons)}
		if present&1 != 0 {
			b.Schedule = &schedule
		}
		if present&2 != 0 {
			if _, err := time.ParseDuration(duration); err != nil {
				return // Karpenter cannot decode such a NodePool; the API server refuses it
			}
			b.Duration = &duration
		}
		// Within the years robfig/cron searches (it gives up after five).
		at := time.Unix(0, 0).UTC().Add(time.Duration(uint64(unix)%(200*365*24*3600)) * time.Second)
		c := fcase{Budgets: []fbudget{b, {Nodes: nodes2, Reasons: reasonsOf(reasons2)}}, Nodes: int(count), At: at}
		tl := newTally(budget.Reasons)
		tl.add(c, karpgateAllows(t, budget.Reasons, c), karpenterV1_15(t, c))
		if tl.agreed != 1 {
			t.Fatalf("%s", tl.mismatches)
		}
	})
}

// reasonsOf reads a fuzzed byte as a budget's reasons: bit 4 absent, bit 5
// [], else bits 0-3 pick among the four reasons, bit 6 misspells them.
func reasonsOf(bits uint8) []string {
	switch {
	case bits&0x10 != 0:
		return nil
	case bits&0x20 != 0:
		return []string{}
	}
	out := []string{}
	for i, r := range budget.Reasons {
		if bits&(1<<i) != 0 {
			name := string(r)
			if bits&0x40 != 0 {
				name = string(name[0]+32) + name[1:]
			}
			out = append(out, name)
		}
	}
	return out
}

// karpenterV1_15 asks v1.15.0's NodePool.GetAllowedDisruptionsByReason, and
// reads an error as Karpenter's disruption controller does
// (MustGetAllowedDisruptions): zero.
func karpenterV1_15(t testing.TB, c fcase) map[budget.Reason]int {
	t.Helper()
	np := &karpv1.NodePool{}
	for _, b := range c.Budgets {
		kb := karpv1.Budget{Nodes: b.Nodes, Schedule: b.Schedule}
		if b.Duration != nil {
			d, err := time.ParseDuration(*b.Duration)
			if err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			kb.Duration = &metav1.Duration{Duration: d}
		}
		if b.Reasons != nil {
			kb.Reasons = make([]karpv1.DisruptionReason, len(b.Reasons))
			for i, r := range b.Reasons {
				kb.Reasons[i] = karpv1.DisruptionReason(r)
			}
		}
		np.Spec.Disruption.Budgets = append(np.Spec.Disruption.Budgets, kb)
	}
	clk := clocktesting.NewFakeClock(c.At)
	out := map[budget.Reason]int{}
	for _, r := range budget.Reasons {
		n, err := np.GetAllowedDisruptionsByReason(clk, c.Nodes, karpv1.DisruptionReason(r))
		if err != nil {
			n = 0
		}
		out[r] = n
	}
	if n := out[budget.Unhealthy]; n > math.MaxInt32 {
		t.Fatalf("Karpenter allowed more than MaxInt32: %d", n)
	}
	return out
}
