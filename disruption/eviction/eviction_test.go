package eviction

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/karpgate/karpgate/disruption/state"
)

var now = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

type podOpt func(*state.Pod)

func pod(name string, opts ...podOpt) *state.Pod {
	p := &state.Pod{}
	p.Namespace, p.Name = "shop", name
	p.Labels = map[string]string{"app": strings.Split(name, "-")[0]}
	p.Spec.NodeName = "node-a"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []state.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func annotated(v string) podOpt {
	return func(p *state.Pod) { p.Annotations = map[string]string{"karpenter.sh/do-not-disrupt": v} }
}
func startedAt(t time.Time) podOpt {
	return func(p *state.Pod) { p.Status.StartTime = &metav1.Time{Time: t} }
}
func owned(apiVersion, kind string) podOpt {
	return func(p *state.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind}}
	}
}
func phase(ph corev1.PodPhase) podOpt { return func(p *state.Pod) { p.Status.Phase = ph } }
func terminating(p *state.Pod)        { p.DeletionTimestamp = &metav1.Time{Time: now} }
func notReady(p *state.Pod)           { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func toleratesDisrupted(p *state.Pod) {
	p.Spec.Tolerations = []corev1.Toleration{{Key: "karpenter.sh/disrupted", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
}

func pdb(name string, app string, allowed int32, opts ...func(*state.PodDisruptionBudget)) *state.PodDisruptionBudget {
	b := &state.PodDisruptionBudget{}
	b.Namespace, b.Name = "shop", name
	if app != "" {
		b.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	minAvailable := intstr.FromInt32(2)
	b.Spec.MinAvailable = &minAvailable
	b.Status = state.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
	for _, o := range opts {
		o(b)
	}
	return b
}

func alwaysAllow(b *state.PodDisruptionBudget) {
	v := "AlwaysAllow"
	b.Spec.UnhealthyPodEvictionPolicy = &v
}

func TestCheckAppliesKarpentersRules(t *testing.T) {
	tests := []struct {
		name    string
		pods    []*state.Pod
		pdbs    []*state.PodDisruptionBudget
		want    []string // kind pod [pdbs]
		ignored []string
	}{
		{"nothing blocks", []*state.Pod{pod("web-1")}, []*state.PodDisruptionBudget{pdb("web", "web", 1)}, nil, nil},
		{"do-not-disrupt true", []*state.Pod{pod("db-0", annotated("true"))}, nil, []string{"do-not-disrupt-pod shop/db-0"}, nil},
		{"do-not-disrupt on a DaemonSet pod blocks too", []*state.Pod{pod("agent-x", annotated("true"), owned("apps/v1", "DaemonSet"))}, nil,
			[]string{"do-not-disrupt-pod shop/agent-x"}, nil},
		{"do-not-disrupt on a finished pod does not", []*state.Pod{pod("job-1", annotated("true"), phase(corev1.PodSucceeded))}, nil, nil, nil},
		{"do-not-disrupt on a terminating pod does not", []*state.Pod{pod("db-0", annotated("true"), terminating)}, nil, nil, nil},
		{"a duration still running", []*state.Pod{pod("batch-1", annotated("2h"), startedAt(now.Add(-time.Hour)))}, nil, []string{"do-not-disrupt-pod shop/batch-1"}, nil},
		{"a lapsed duration", []*state.Pod{pod("batch-1", annotated("2h"), startedAt(now.Add(-3*time.Hour)))}, nil, nil,
			[]string{"shop/batch-1 lapsed at 2026-01-05T09:00:00Z"}},
		{"a duration without a start time blocks", []*state.Pod{pod("batch-1", annotated("30m"))}, nil, []string{"do-not-disrupt-pod shop/batch-1"}, nil},
		{"any other value is ignored", []*state.Pod{pod("web-1", annotated("yes"))}, nil, nil, []string{`shop/web-1 "yes", which Karpenter ignores`}},
		{"a PDB at zero", []*state.Pod{pod("web-1")}, []*state.PodDisruptionBudget{pdb("web", "web", 0)}, []string{"pdb shop/web-1 shop/web"}, nil},
		{"a PDB of another namespace selects nothing here", []*state.Pod{pod("web-1")},
			[]*state.PodDisruptionBudget{func() *state.PodDisruptionBudget { b := pdb("web", "web", 0); b.Namespace = "other"; return b }()}, nil, nil},
		{"a PDB without selector selects nothing", []*state.Pod{pod("web-1")}, []*state.PodDisruptionBudget{pdb("none", "", 0)}, nil, nil},
		{"an empty selector selects every pod", []*state.Pod{pod("web-1")},
			[]*state.PodDisruptionBudget{pdb("all", "", 0, func(b *state.PodDisruptionBudget) { b.Spec.Selector = &metav1.LabelSelector{} })},
			[]string{"pdb shop/web-1 shop/all"}, nil},
		{"two PDBs on one pod", []*state.Pod{pod("web-1")}, []*state.PodDisruptionBudget{pdb("web", "web", 1),
			pdb("all", "", 1, func(b *state.PodDisruptionBudget) { b.Spec.Selector = &metav1.LabelSelector{} })},
			[]string{"multiple-pdbs shop/web-1 shop/web,shop/all"}, nil},
		{"AlwaysAllow lets an unready pod go", []*state.Pod{pod("web-1", notReady)}, []*state.PodDisruptionBudget{pdb("web", "web", 0, alwaysAllow)}, nil, nil},
		{"AlwaysAllow keeps a ready pod", []*state.Pod{pod("web-1")}, []*state.PodDisruptionBudget{pdb("web", "web", 0, alwaysAllow)}, []string{"pdb shop/web-1 shop/web"}, nil},
		{"mirror pods are not evicted", []*state.Pod{pod("web-static", owned("v1", "Node"))}, []*state.PodDisruptionBudget{pdb("web", "web", 0)}, nil, nil},
		{"pods tolerating the disrupted taint stay", []*state.Pod{pod("web-1", toleratesDisrupted)}, []*state.PodDisruptionBudget{pdb("web", "web", 0)}, nil, nil},
		{"DaemonSet pods meet PDBs", []*state.Pod{pod("web-ds", owned("apps/v1", "DaemonSet"))}, []*state.PodDisruptionBudget{pdb("web", "web", 0)},
			[]string{"pdb shop/web-ds shop/web"}, nil},
		{"a do-not-disrupt pod is named once, not again for its PDB", []*state.Pod{pod("web-1", annotated("true"))}, []*state.PodDisruptionBudget{pdb("web", "web", 0)},
			[]string{"do-not-disrupt-pod shop/web-1"}, nil},
		{"every blocker, in pod order", []*state.Pod{pod("web-2"), pod("db-0", annotated("true")), pod("web-1")}, []*state.PodDisruptionBudget{pdb("web", "web", 0)},
			[]string{"do-not-disrupt-pod shop/db-0", "pdb shop/web-1 shop/web", "pdb shop/web-2 shop/web"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(tt.pods, state.GroupPDBs(tt.pdbs), now)
			var got []string
			for _, b := range r.Blockers {
				s := string(b.Kind) + " " + b.Pod
				if len(b.PDBs) > 0 {
					s += " " + strings.Join(b.PDBs, ",")
				}
				got = append(got, s)
				if b.Message == "" {
					t.Errorf("blocker %s has no message", s)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("blockers = %q, want %q", got, tt.want)
			}
			if len(r.Ignored) != len(tt.ignored) {
				t.Fatalf("ignored = %+v, want %q", r.Ignored, tt.ignored)
			}
			for i, want := range tt.ignored {
				pod, text, _ := strings.Cut(want, " ")
				if r.Ignored[i].Pod != pod || !strings.Contains(r.Ignored[i].Message, text) {
					t.Errorf("ignored[%d] = %+v, want %q", i, r.Ignored[i], want)
				}
			}
		})
	}
}

func TestBlockerMessagesSayWhatAndTheFix(t *testing.T) {
	r := Check([]*state.Pod{pod("db-0", annotated("2h"), startedAt(now.Add(-time.Hour))), pod("web-1")},
		state.GroupPDBs([]*state.PodDisruptionBudget{pdb("web", "web", 0)}), now)
	want := []string{
		`pod shop/db-0 has karpenter.sh/do-not-disrupt: "2h", which holds until 2026-01-05T11:00:00Z (2h after the pod started); remove the annotation (or delete the pod) to let Karpenter disrupt the node`,
		"PodDisruptionBudget shop/web allows 0 disruptions (minAvailable 2, 2 of 2 expected pods healthy, 2 needed) and selects pod shop/web-1",
	}
	if len(r.Blockers) != 2 || r.Blockers[0].Message != want[0] || r.Blockers[1].Message != want[1] {
		t.Fatalf("messages:\n%q\nwant\n%q", r.Blockers, want)
	}
	if r.Blockers[0].Until == nil || !r.Blockers[0].Until.Equal(now.Add(time.Hour)) {
		t.Errorf("until = %v", r.Blockers[0].Until)
	}
}

func TestReschedulableLeavesOutDaemonSetMirrorAndFinishedPods(t *testing.T) {
	pods := []*state.Pod{
		pod("web-1"),
		pod("agent-x", owned("apps/v1", "DaemonSet")),
		pod("kube-proxy", owned("v1", "Node")),
		pod("job-1", phase(corev1.PodSucceeded)),
		pod("web-0", terminating),
		pod("db-0", terminating, owned("apps/v1", "StatefulSet")),
	}
	var got []string
	for _, p := range Reschedulable(pods) {
		got = append(got, p.Name)
	}
	if want := []string{"db-0", "web-1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("reschedulable = %v, want %v", got, want)
	}
	if len(Reschedulable(pods[1:4])) != 0 {
		t.Error("a node with only DaemonSet, mirror and finished pods is not empty")
	}
}
