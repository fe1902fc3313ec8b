package progress

import (
	"sort"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
)

// holds says, per NodePool of the plan, whether to hold or release it.
func (s *stepper) holds() map[string]Want {
	all := s.in.Waves.All()
	want := make(map[string]Want, len(all))
	for _, name := range all {
		want[name] = Hold
	}
	defer s.countHeld(want)
	var released []string
	switch s.st.Phase {
	case v1alpha1.PhaseAborted:
		if !s.abortNow {
			for _, name := range all {
				want[name] = Leave
			}
		}
		return want
	case v1alpha1.PhaseFailed, v1alpha1.PhasePaused:
		return want
	case v1alpha1.PhaseIdle:
		if len(s.in.Waves) > 0 {
			released = s.limit(append([]string(nil), s.in.Waves[0]...))
		}
	case v1alpha1.PhaseRolling, v1alpha1.PhaseSoaking:
		released = s.rolling()
		s.wave().Rolling = released
	}
	for _, name := range released {
		want[name] = Release
	}
	// Drift the plan does not pace rolls at the NodePool's own budgets
	// while the plan has nothing of its own to roll there.
	for _, name := range all {
		if p := s.in.NodePools[name]; p.Drifted == 0 && p.Ungoverned > 0 {
			want[name] = Release
		}
	}
	return want
}

// rolling picks the current wave's drifted NodePools to release, those
// already released first, at most maxRollingNodePools.
func (s *stepper) rolling() []string {
	var drifted []string
	for _, name := range s.wave().NodePools {
		if s.in.NodePools[name].Drifted > 0 {
			drifted = append(drifted, name)
		}
	}
	sort.SliceStable(drifted, func(i, j int) bool {
		ri, rj := s.in.NodePools[drifted[i]].Holder == HeldByNobody, s.in.NodePools[drifted[j]].Holder == HeldByNobody
		if ri != rj {
			return ri
		}
		return drifted[i] < drifted[j]
	})
	out := s.limit(drifted)
	sort.Strings(out)
	return out
}

func (s *stepper) limit(names []string) []string {
	if n := s.spec.MaxRolling(); n > 0 && len(names) > n {
		return names[:n]
	}
	return names
}

func (s *stepper) countHeld(want map[string]Want) {
	held := 0
	for name, w := range want {
		h := s.in.NodePools[name].Holder
		if (w == Hold && (h == HeldByNobody || h == HeldByPlan)) || (w == Leave && h == HeldByPlan) {
			held++
		}
	}
	s.st.HeldNodePools = int32(held) //nolint:gosec // a count of NodePools
}
