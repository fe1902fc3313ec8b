package report

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
)

// Plan is one plan as reported.
type Plan struct {
	Name        string `json:"name"`
	Paused      bool   `json:"paused"`
	Phase       string `json:"phase"`
	CurrentWave string `json:"currentWave"`
	Ready       string `json:"ready"`
	Reason      string `json:"reason"`
	Message     string `json:"message"`
	// Current: observedGeneration has caught up with the spec.
	Current bool  `json:"current"`
	Held    int32 `json:"heldNodePools"`
	// SoakLeft is what is left of the current wave's soak, nil when none soaks.
	SoakLeft  *Duration                  `json:"soakLeft,omitempty"`
	Failure   *v1alpha1.Failure          `json:"failure,omitempty"`
	Conflicts []string                   `json:"conflicts,omitempty"`
	Waves     []Wave                     `json:"waves"`
	Status    v1alpha1.RolloutPlanStatus `json:"-"`
}

// Wave is one wave as reported.
type Wave struct {
	v1alpha1.WaveStatus `json:",inline"`
	Soak                Duration `json:"soak"`
}

// Duration marshals as Go's duration text.
type Duration struct{ time.Duration }

// MarshalJSON writes "2m10s".
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Build reports plans at now, sorted by name.
func Build(plans []v1alpha1.RolloutPlan, now time.Time) []Plan {
	out := make([]Plan, 0, len(plans))
	for i := range plans {
		p := &plans[i]
		r := Plan{Name: p.Name, Paused: p.Spec.Paused, Phase: string(p.Status.Phase), CurrentWave: p.Status.CurrentWave,
			Current: p.Status.ObservedGeneration == p.Generation, Held: p.Status.HeldNodePools, Failure: p.Status.Failure,
			Conflicts: p.Status.Conflicts, Status: p.Status, Ready: "Unknown"}
		if r.Phase == "" {
			r.Phase = "Pending"
		}
		if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady); c != nil {
			r.Ready, r.Reason, r.Message = string(c.Status), c.Reason, c.Message
		}
		for j, w := range p.Status.Waves {
			soak := p.Spec.SoakOf(indexOf(p.Spec.Waves, w.Name, j))
			r.Waves = append(r.Waves, Wave{WaveStatus: w, Soak: Duration{soak}})
			if w.Name == p.Status.CurrentWave && w.Phase == v1alpha1.WaveSoaking && w.SoakEndsAt != nil {
				left := max(w.SoakEndsAt.Sub(now), 0).Truncate(time.Second)
				r.SoakLeft = &Duration{left}
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func indexOf(waves []v1alpha1.Wave, name string, fallback int) int {
	for i, w := range waves {
		if w.Name == name {
			return i
		}
	}
	return fallback
}
