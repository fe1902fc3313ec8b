package membership

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
)

// NodePool is what membership reads of a NodePool.
type NodePool struct {
	Name   string
	Labels map[string]string
}

// Waves are the NodePool names of each wave of a plan, in spec order,
// each sorted.
type Waves [][]string

// Assign puts pools into the waves of spec. A selector that does not parse
// (which admission refuses) selects nothing, and is returned as an error
// naming its wave, after the waves that did parse are filled.
func Assign(spec *v1alpha1.RolloutPlanSpec, pools []NodePool) (Waves, error) {
	sorted := append([]NodePool(nil), pools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	taken := map[string]bool{}
	out := make(Waves, len(spec.Waves))
	var firstErr error
	for i, w := range spec.Waves {
		sel, err := v1alpha1.Selector(w.NodePoolSelector)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("spec.waves[%d].nodePoolSelector: %w", i, err)
			}
			continue
		}
		var matched []string
		for _, p := range sorted {
			if !taken[p.Name] && sel.Matches(labels.Set(p.Labels)) {
				matched = append(matched, p.Name)
			}
		}
		matched = matched[:spec.NodePoolsOf(i, len(matched))]
		for _, name := range matched {
			taken[name] = true
		}
		out[i] = matched
	}
	return out, firstErr
}

// All lists every NodePool of the waves, sorted.
func (w Waves) All() []string {
	var out []string
	for _, names := range w {
		out = append(out, names...)
	}
	sort.Strings(out)
	return out
}

// WaveOf returns the index of the wave holding pool, -1 if none.
func (w Waves) WaveOf(pool string) int {
	for i, names := range w {
		for _, n := range names {
			if n == pool {
				return i
			}
		}
	}
	return -1
}

// Without returns the waves with the given NodePools left out.
func (w Waves) Without(drop map[string]string) Waves {
	out := make(Waves, len(w))
	for i, names := range w {
		for _, n := range names {
			if _, gone := drop[n]; !gone {
				out[i] = append(out[i], n)
			}
		}
	}
	return out
}

// Plan is what ownership reads of a plan.
type Plan struct {
	Name    string
	Created time.Time
	Spec    *v1alpha1.RolloutPlanSpec
}

// Owners says, for every NodePool some plan selects, which plan has it:
// the oldest that selects it. Each plan's waves are assigned over every
// NodePool, so a plan's membership does not depend on younger plans.
func Owners(plans []Plan, pools []NodePool) map[string]string {
	ordered := append([]Plan(nil), plans...)
	sort.SliceStable(ordered, func(i, j int) bool {
		if !ordered[i].Created.Equal(ordered[j].Created) {
			return ordered[i].Created.Before(ordered[j].Created)
		}
		return ordered[i].Name < ordered[j].Name
	})
	owner := map[string]string{}
	for _, p := range ordered {
		waves, _ := Assign(p.Spec, pools)
		for _, n := range waves.All() {
			if _, has := owner[n]; !has {
				owner[n] = p.Name
			}
		}
	}
	return owner
}

// Overlap is a NodePool that two plans select.
type Overlap struct {
	NodePool string
	// Wave is the index of the wave of the plan judged that selects it;
	// Other and OtherWave name the plan that also does and its wave.
	Wave      int
	Other     string
	OtherWave string
}

// Overlaps lists the NodePools that plan (judged, as it will be stored)
// shares with the other plans, in NodePool name order.
func Overlaps(plan Plan, others []Plan, pools []NodePool) []Overlap {
	mine, _ := Assign(plan.Spec, pools)
	var out []Overlap
	for _, o := range others {
		if o.Name == plan.Name {
			continue
		}
		theirs, _ := Assign(o.Spec, pools)
		for _, n := range mine.All() {
			if j := theirs.WaveOf(n); j >= 0 {
				out = append(out, Overlap{NodePool: n, Wave: mine.WaveOf(n), Other: o.Name, OtherWave: o.Spec.Waves[j].Name})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].NodePool < out[j].NodePool })
	return out
}
