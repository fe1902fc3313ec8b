package explain

import (
	"bytes"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
	goldenfile "github.com/karpgate/karpgate/test/golden"
)

// notReadySince turns node i NotReady since at.
func (w *world) notReadySince(i int, at time.Time) *world {
	w.nodes[i].Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", LastTransitionTime: metav1.NewTime(at)}}
	return w
}

// TestExplainNodeRepair: Karpenter v1.15 paces node repair with the
// Unhealthy reason. Its budget does not count nodes that are only NotReady,
// it is not stopped by do-not-disrupt or a missing initialized label, and
// it has its own stops: do-not-repair, a healthy node, and the breaker.
func TestExplainNodeRepair(t *testing.T) {
	tests := []struct {
		name      string
		budgets   string
		change    func(w *world)
		every     []string // kinds of StopsEveryReason
		spared    bool     // every stop spares Unhealthy
		unhealthy []string // Unhealthy's own stops
		drifted   []string // Drifted's stops, for contrast
		note      string   // an Unhealthy note contains this
	}{
		{"a Ready node is no repair candidate", defaultBudget, nil,
			nil, true, []string{"healthy"}, []string{"not-drifted"}, "NodeRepair feature gate"},
		{"a NotReady node is, and does not use up repair's budget", defaultBudget, func(w *world) { w.notReadySince(0, monday10.Add(-time.Hour)) },
			nil, true, nil, []string{"not-drifted", "budget"}, "Ready has been False since 2026-01-05T09:00:00Z"},
		{"Ready Unknown counts too", defaultBudget, func(w *world) {
			w.notReadySince(0, monday10)
			w.node().Status.Conditions[0].Status = corev1.ConditionUnknown
		}, nil, true, nil, []string{"not-drifted", "budget"}, "Ready has been Unknown"},
		{"do-not-repair", defaultBudget, func(w *world) {
			w.notReadySince(0, monday10)
			w.node().Annotations = map[string]string{karpenter.DoNotRepairAnnotation: "true"}
		}, nil, true, []string{"do-not-repair"}, []string{"not-drifted", "budget"}, ""},
		{"do-not-disrupt does not stop repair", defaultBudget, func(w *world) {
			w.notReadySince(0, monday10)
			w.node().Annotations = map[string]string{karpenter.DoNotDisruptAnnotation: "true"}
		}, []string{"do-not-disrupt-node"}, true, nil, []string{"not-drifted", "budget"}, ""},
		{"an uninitialized, registered node is repaired without budget", `[{"nodes":"0","reasons":["Unhealthy"]}]`, func(w *world) {
			w.notReadySince(0, monday10)
			delete(w.node().Labels, karpenter.NodeInitializedLabel)
			w.node().Labels[karpenter.NodeRegisteredLabel] = "true"
		}, []string{"not-initialized"}, true, nil, []string{"not-drifted"}, "without using the budget"},
		{"an unregistered node is not", defaultBudget, func(w *world) {
			w.notReadySince(0, monday10)
			delete(w.node().Labels, karpenter.NodeInitializedLabel)
		}, []string{"not-initialized"}, false, nil, []string{"not-drifted"}, ""},
		{"an Unhealthy budget of zero", `[{"nodes":"0","reasons":["Unhealthy"]}]`, func(w *world) { w.notReadySince(0, monday10) },
			nil, true, []string{"budget"}, []string{"not-drifted"}, ""},
		{"more than a fifth unhealthy stops repair", defaultBudget, func(w *world) {
			w.notReadySince(0, monday10).notReadySince(3, monday10)
		}, nil, true, []string{"repair-stopped"}, []string{"not-drifted", "budget"}, ""},
		{"pods that block eviction leave it to the repair policy", defaultBudget, func(w *world) {
			w.notReadySince(0, monday10)
			w.pdbs = []*state.PodDisruptionBudget{pdb("shop", "web", 0)}
		}, nil, true, nil, []string{"not-drifted", "pods", "budget"}, "bounds the drain with a terminationGracePeriod"},
		{"a rebooting node stops every reason", defaultBudget, func(w *world) {
			w.notReadySince(0, monday10)
			w.claim().Status.Conditions = append(w.claim().Status.Conditions, state.Condition{Type: karpenter.ConditionRebooting, Status: "True"})
		}, []string{"rebooting"}, false, []string{"budget"}, []string{"not-drifted", "budget"}, ""}, // a reboot uses up every budget
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.budgets)
			if tt.change != nil {
				tt.change(w)
			}
			e := Explain(w.input(), monday10)
			var every []string
			for _, s := range e.StopsEveryReason {
				every = append(every, string(s.Kind))
				if got := slices.Contains(s.Spares, budget.Unhealthy); got != tt.spared {
					t.Errorf("%s spares Unhealthy: %v, want %v", s.Kind, got, tt.spared)
				}
			}
			if !reflect.DeepEqual(every, tt.every) {
				t.Errorf("every reason: %q, want %q", every, tt.every)
			}
			u, d := reasonOf(t, e, budget.Unhealthy), reasonOf(t, e, budget.Drifted)
			if got := stopKinds(u); !reflect.DeepEqual(got, tt.unhealthy) {
				t.Errorf("Unhealthy stops %q, want %q", got, tt.unhealthy)
			}
			if got := stopKinds(d); !reflect.DeepEqual(got, tt.drifted) {
				t.Errorf("Drifted stops %q, want %q", got, tt.drifted)
			}
			if want := len(e.StopsFor(budget.Unhealthy)) == 0 && len(tt.unhealthy) == 0; u.Candidate != want || e.Candidate(budget.Unhealthy) != want {
				t.Errorf("Unhealthy candidate %v, want %v", u.Candidate, want)
			}
			if tt.note != "" && !strings.Contains(strings.Join(u.Notes, "\n"), tt.note) {
				t.Errorf("Unhealthy notes %q do not say %q", u.Notes, tt.note)
			}
		})
	}
}

// Karpenter v1.14 has no node repair: no Unhealthy verdict, and nothing
// spares it.
func TestExplainWithoutNodeRepair(t *testing.T) {
	w := newWorld(t, defaultBudget).notReadySince(0, monday10)
	w.node().Annotations = map[string]string{karpenter.DoNotDisruptAnnotation: "true"}
	in := w.input()
	in.Reasons = v114(t)
	e := Explain(in, monday10)
	if len(e.Reasons) != 3 || e.Candidate(budget.Unhealthy) {
		t.Errorf("reasons %+v", e.Reasons)
	}
	if s := e.StopsEveryReason; len(s) != 1 || s[0].Spares != nil || strings.Contains(s[0].Message, "repair") {
		t.Errorf("every reason: %+v", s)
	}
}

func TestExplainStaticNodePool(t *testing.T) {
	replicas := func(n int64) func(w *world) { return func(w *world) { w.pool.Spec.Replicas = &n } }
	limit := func(n int64) func(w *world) {
		return func(w *world) {
			q := resource.MustParse(strings.TrimSpace(string(rune('0' + n))))
			w.pool.Spec.Limits.Nodes = &q
		}
	}
	tests := []struct {
		name             string
		changes          []func(w *world)
		drifted, repair  []string
		consolidationWas string
	}{
		{"drift replaces nodes within the Drifted budget", []func(w *world){replicas(5)}, nil, []string{"healthy"}, "static-nodepool"},
		{"not while scaling down", []func(w *world){replicas(4)}, []string{"static-scaling-down"}, []string{"healthy", "static-scaling-down"}, "static-nodepool"},
		{"nor at limits.nodes", []func(w *world){replicas(5), limit(5)}, []string{"static-at-limit"}, []string{"healthy", "static-at-limit"}, "static-nodepool"},
		{"below limits.nodes it can", []func(w *world){replicas(5), limit(6)}, nil, []string{"healthy"}, "static-nodepool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, defaultBudget).drifted("NodePoolDrifted", monday10)
			for _, c := range tt.changes {
				c(w)
			}
			e := Explain(w.input(), monday10)
			d := reasonOf(t, e, budget.Drifted)
			if got := stopKinds(d); !reflect.DeepEqual(got, tt.drifted) {
				t.Errorf("Drifted stops %q, want %q", got, tt.drifted)
			}
			if !strings.Contains(strings.Join(d.Notes, "\n"), "replaces a drifted node with one built from the template, within the Drifted budget and limits.nodes") {
				t.Errorf("Drifted notes %q", d.Notes)
			}
			if got := stopKinds(reasonOf(t, e, budget.Unhealthy)); !reflect.DeepEqual(got, tt.repair) {
				t.Errorf("Unhealthy stops %q, want %q", got, tt.repair)
			}
			for _, r := range []budget.Reason{budget.Empty, budget.Underutilized} {
				if got := stopKinds(reasonOf(t, e, r)); !reflect.DeepEqual(got, []string{tt.consolidationWas}) {
					t.Errorf("%s stops %q", r, got)
				}
			}
		})
	}
}

func TestExplainBalancedConsolidation(t *testing.T) {
	for _, policy := range []string{karpenter.ConsolidationBalanced, karpenter.ConsolidationWhenEmptyOrUnderutilized} {
		w := newWorld(t, defaultBudget)
		w.pool.Spec.Disruption.ConsolidationPolicy = policy
		u := reasonOf(t, Explain(w.input(), monday10), budget.Underutilized)
		says := strings.Contains(strings.Join(u.Notes, "\n"), "consolidationPolicy Balanced (Karpenter v1.14): Karpenter consolidates the node only when the move pays")
		if says != (policy == karpenter.ConsolidationBalanced) || !u.Candidate {
			t.Errorf("%s: candidate %v, notes %q", policy, u.Candidate, u.Notes)
		}
	}
}

// TestWriteRepairGolden renders a drifted NotReady node that node repair
// may take while drift cannot: its being NotReady uses up Drifted's budget
// (with another node being replaced), not Unhealthy's.
func TestWriteRepairGolden(t *testing.T) {
	w := newWorld(t, `[{"nodes":"40%"}]`).drifted("AMIDrift", monday10.Add(-time.Hour)).notReadySince(0, monday10.Add(-45*time.Minute))
	w.nodes[2].Spec.Taints = []corev1.Taint{{Key: karpenter.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}}
	var text bytes.Buffer
	if err := WriteText(&text, Explain(w.input(), monday10), nil); err != nil {
		t.Fatal(err)
	}
	goldenfile.Assert(t, filepath.Join("testdata", "repair.txt"), text.Bytes())
}

func reasonOf(t *testing.T, e *Explanation, r budget.Reason) Reason {
	t.Helper()
	for _, rs := range e.Reasons {
		if rs.Reason == r {
			return rs
		}
	}
	t.Fatalf("no %s verdict", r)
	return Reason{}
}

func stopKinds(r Reason) []string {
	var out []string
	for _, s := range r.Stops {
		out = append(out, string(s.Kind))
	}
	return out
}
