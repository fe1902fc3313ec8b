package v1alpha1

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Defaults of the gates. They are applied when a plan is read, not stored
// by the API server, so that a plan shows what its author wrote and a
// default changed in a later release reaches plans stored before it.
const (
	DefaultNodeReadyTimeout    = 15 * time.Minute
	DefaultMaxFailedNodeClaims = 0
	DefaultMinPodsReadyPercent = 90
	DefaultPodReadyTimeout     = 5 * time.Minute
	// DefaultSoak is the CRD's default of a wave's soak.
	DefaultSoak = 10 * time.Minute
)

// EffectiveGates are a wave's gates with every default filled in.
type EffectiveGates struct {
	NodeReadyTimeout    time.Duration `json:"nodeReadyTimeout"`
	MaxFailedNodeClaims int32         `json:"maxFailedNodeClaims"`
	MinPodsReadyPercent int32         `json:"minPodsReadyPercent"`
	PodReadyTimeout     time.Duration `json:"podReadyTimeout"`
}

// GatesOf returns the gates of the wave at index i: each field from the
// wave's own gates, else the plan's, else the default.
func (s *RolloutPlanSpec) GatesOf(i int) EffectiveGates {
	g := EffectiveGates{
		NodeReadyTimeout:    DefaultNodeReadyTimeout,
		MaxFailedNodeClaims: DefaultMaxFailedNodeClaims,
		MinPodsReadyPercent: DefaultMinPodsReadyPercent,
		PodReadyTimeout:     DefaultPodReadyTimeout,
	}
	layers := []*Gates{s.Gates}
	if i >= 0 && i < len(s.Waves) {
		layers = append(layers, s.Waves[i].Gates)
	}
	for _, l := range layers {
		if l == nil {
			continue
		}
		if l.NodeReadyTimeout != nil {
			g.NodeReadyTimeout = l.NodeReadyTimeout.Duration
		}
		if l.MaxFailedNodeClaims != nil {
			g.MaxFailedNodeClaims = *l.MaxFailedNodeClaims
		}
		if l.MinPodsReadyPercent != nil {
			g.MinPodsReadyPercent = *l.MinPodsReadyPercent
		}
		if l.PodReadyTimeout != nil {
			g.PodReadyTimeout = l.PodReadyTimeout.Duration
		}
	}
	return g
}

// SoakOf returns the soak of wave i; the CRD defaults it, and an object
// that was never defaulted (built in Go) gets the same default here.
func (s *RolloutPlanSpec) SoakOf(i int) time.Duration {
	if i < 0 || i >= len(s.Waves) {
		return 0
	}
	if d := s.Waves[i].Soak.Duration; d > 0 {
		return d
	}
	return DefaultSoak
}

// NodePoolsOf is how many of n selected NodePools wave i takes: all of
// them when unset, a count capped at n, or a percentage of n rounded up
// (as Karpenter rounds its budgets).
func (s *RolloutPlanSpec) NodePoolsOf(i, n int) int {
	if i < 0 || i >= len(s.Waves) || s.Waves[i].NodePools == nil {
		return n
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(s.Waves[i].NodePools, n, true)
	if err != nil || v < 0 {
		return n // the schema and Validate refuse it; never take less than asked by mistake
	}
	return min(v, n)
}

// MaxRolling is how many NodePools of a wave may roll at once; 0 means
// every one.
func (s *RolloutPlanSpec) MaxRolling() int {
	if s.MaxRollingNodePools == nil || *s.MaxRollingNodePools < 1 {
		return 0
	}
	return int(*s.MaxRollingNodePools)
}

// Governs reports whether the plan paces drift of reason.
func (s *RolloutPlanSpec) Governs(reason string) bool {
	if len(s.DriftReasons) == 0 {
		return true
	}
	for _, r := range s.DriftReasons {
		if string(r) == reason {
			return true
		}
	}
	return false
}
