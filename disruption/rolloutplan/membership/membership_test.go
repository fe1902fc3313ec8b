package membership

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
)

func wave(name string, match map[string]string, pools *intstr.IntOrString) v1alpha1.Wave {
	return v1alpha1.Wave{Name: name, NodePoolSelector: metav1.LabelSelector{MatchLabels: match}, NodePools: pools}
}

func pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
func count(n int) *intstr.IntOrString  { v := intstr.FromInt32(int32(n)); return &v }

var fleet = []NodePool{
	{Name: "web", Labels: map[string]string{"tier": "prod"}},
	{Name: "canary", Labels: map[string]string{"rollout": "canary"}},
	{Name: "batch", Labels: map[string]string{"tier": "prod"}},
	{Name: "gpu", Labels: map[string]string{"tier": "prod", "gpu": "true"}},
	{Name: "dev", Labels: map[string]string{"tier": "dev"}},
}

func TestAssign(t *testing.T) {
	for _, tc := range []struct {
		name  string
		waves []v1alpha1.Wave
		want  Waves
	}{
		{"canary then the rest", []v1alpha1.Wave{wave("canary", map[string]string{"rollout": "canary"}, nil), wave("rest", nil, nil)},
			Waves{{"canary"}, {"batch", "dev", "gpu", "web"}}},
		{"first matching wave wins", []v1alpha1.Wave{wave("prod", map[string]string{"tier": "prod"}, nil), wave("gpu", map[string]string{"gpu": "true"}, nil)},
			Waves{{"batch", "gpu", "web"}, nil}},
		{"a percentage rounds up, in name order", []v1alpha1.Wave{wave("canary", map[string]string{"rollout": "canary"}, nil), wave("quarter", nil, pct("25%")), wave("rest", nil, nil)},
			Waves{{"canary"}, {"batch"}, {"dev", "gpu", "web"}}},
		{"a count larger than the selection takes all", []v1alpha1.Wave{wave("two", map[string]string{"tier": "prod"}, count(2)), wave("prod-rest", map[string]string{"tier": "prod"}, count(10))},
			Waves{{"batch", "gpu"}, {"web"}}},
		{"a pool no wave selects is not in the plan", []v1alpha1.Wave{wave("prod", map[string]string{"tier": "prod"}, nil)},
			Waves{{"batch", "gpu", "web"}}},
		{"100% is everything left", []v1alpha1.Wave{wave("all", nil, pct("100%"))},
			Waves{{"batch", "canary", "dev", "gpu", "web"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Assign(&v1alpha1.RolloutPlanSpec{Waves: tc.waves}, fleet)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Assign = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAssignReportsABadSelector(t *testing.T) {
	bad := v1alpha1.Wave{Name: "bad", NodePoolSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}}
	got, err := Assign(&v1alpha1.RolloutPlanSpec{Waves: []v1alpha1.Wave{bad, wave("rest", nil, nil)}}, fleet)
	if err == nil || got[0] != nil || len(got[1]) != 5 {
		t.Fatalf("Assign = %v, %v; want the bad wave empty, an error naming it, the rest filled", got, err)
	}
	if want := "spec.waves[0].nodePoolSelector"; !contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}

func TestOwnersAndOverlaps(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	prod := Plan{Name: "prod", Created: t0, Spec: &v1alpha1.RolloutPlanSpec{Waves: []v1alpha1.Wave{wave("prod", map[string]string{"tier": "prod"}, nil)}}}
	gpu := Plan{Name: "gpu", Created: t0.Add(time.Hour), Spec: &v1alpha1.RolloutPlanSpec{Waves: []v1alpha1.Wave{wave("gpus", map[string]string{"gpu": "true"}, nil)}}}
	same := Plan{Name: "another", Created: t0, Spec: gpu.Spec}
	if got, want := Owners([]Plan{gpu, prod}, fleet), map[string]string{"batch": "prod", "gpu": "prod", "web": "prod"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Owners = %v, want the older plan to have gpu: %v", got, want)
	}
	if got := Owners([]Plan{prod, same}, fleet)["gpu"]; got != "another" {
		t.Errorf("plans of the same age: gpu goes to %q, want the first by name", got)
	}
	got := Overlaps(gpu, []Plan{prod, gpu}, fleet)
	want := []Overlap{{NodePool: "gpu", Wave: 0, Other: "prod", OtherWave: "prod"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Overlaps = %+v, want %+v", got, want)
	}
	if got := Overlaps(prod, []Plan{prod}, fleet); len(got) != 0 {
		t.Errorf("a plan overlaps itself: %+v", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
