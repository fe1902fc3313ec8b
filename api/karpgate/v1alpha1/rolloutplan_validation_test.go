package v1alpha1

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestValidate(t *testing.T) {
	count := func(v intstr.IntOrString) *intstr.IntOrString { return &v }
	for _, tc := range []struct {
		name string
		wave Wave
		want string // "" for valid
	}{
		{"a selector and no count", Wave{Name: "a", NodePoolSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}}, ""},
		{"a percentage", Wave{Name: "a", NodePools: count(intstr.FromString("25%"))}, ""},
		{"a count", Wave{Name: "a", NodePools: count(intstr.FromInt32(2))}, ""},
		{"zero", Wave{Name: "a", NodePools: count(intstr.FromInt32(0))}, `spec.waves[0].nodePools: Invalid value: "0": use a count of at least 1`},
		{"a percentage over 100", Wave{Name: "a", NodePools: count(intstr.FromString("120%"))}, `spec.waves[0].nodePools: Invalid value: "120%"`},
		{"a number as a string", Wave{Name: "a", NodePools: count(intstr.FromString("3"))}, `spec.waves[0].nodePools: Invalid value: "3"`},
		{"an operator that does not exist", Wave{Name: "a", NodePoolSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near", Values: []string{"x"}}}}},
			`spec.waves[0].nodePoolSelector: Invalid value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &RolloutPlan{Spec: RolloutPlanSpec{Waves: []Wave{tc.wave}}}
			got := p.Validate().ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("Validate = %v, want valid", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("Validate = %v, want %q", got, tc.want)
			}
		})
	}
	dup := &RolloutPlan{Spec: RolloutPlanSpec{Waves: []Wave{{Name: "a"}, {Name: "a"}}}}
	if err := dup.Validate().ToAggregate(); err == nil || !strings.Contains(err.Error(), "spec.waves[1].name: Duplicate value") {
		t.Errorf("duplicate names: %v", err)
	}
}

func TestGatesOfLayersWaveOverPlanOverDefaults(t *testing.T) {
	thirty := int32(30)
	spec := RolloutPlanSpec{
		Gates: &Gates{MinPodsReadyPercent: &thirty, NodeReadyTimeout: &metav1.Duration{Duration: 600e9}},
		Waves: []Wave{{Name: "a", Gates: &Gates{NodeReadyTimeout: &metav1.Duration{Duration: 60e9}}}, {Name: "b"}},
	}
	if g := spec.GatesOf(0); g.NodeReadyTimeout != 60e9 || g.MinPodsReadyPercent != 30 || g.PodReadyTimeout != DefaultPodReadyTimeout || g.MaxFailedNodeClaims != 0 {
		t.Errorf("wave a: %+v", g)
	}
	if g := spec.GatesOf(1); g.NodeReadyTimeout != 600e9 {
		t.Errorf("wave b: %+v", g)
	}
	if spec.SoakOf(1) != DefaultSoak || spec.NodePoolsOf(0, 7) != 7 {
		t.Errorf("soak %s, pools %d", spec.SoakOf(1), spec.NodePoolsOf(0, 7))
	}
}
