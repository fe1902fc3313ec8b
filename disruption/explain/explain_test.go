package explain

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/budget/holdrecord"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	goldenfile "github.com/karpgate/karpgate/test/golden"
)

// Monday 5 January 2026, 10:00 UTC: inside business hours.
var monday10 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

// world is a NodePool "business" of five healthy, initialized, consolidatable
// nodes, the first of which (business-0, on node-business-0) is explained.
type world struct {
	pool   *state.NodePool
	claims []*state.NodeClaim
	nodes  []*corev1.Node
	pods   []*state.Pod
	pdbs   []*state.PodDisruptionBudget
	target int
}

func newWorld(t *testing.T, budgets string) *world {
	t.Helper()
	np := &state.NodePool{}
	np.Name = "business"
	np.Spec.Disruption.ConsolidationPolicy = karpenter.ConsolidationWhenEmptyOrUnderutilized
	np.Spec.Disruption.ConsolidateAfter = "30s"
	np.Spec.Template.Spec.NodeClassRef = state.NodeClassRef{Group: karpenter.AWSGroup, Kind: karpenter.KindEC2NodeClass, Name: "default"}
	if err := json.Unmarshal([]byte(budgets), &np.Spec.Disruption.Budgets); err != nil {
		t.Fatal(err)
	}
	w := &world{pool: np}
	for i := range 5 {
		name := "business-" + string(rune('0'+i))
		nc := &state.NodeClaim{}
		nc.Name, nc.Labels = name, map[string]string{karpenter.NodePoolLabel: "business"}
		nc.CreationTimestamp = metav1.NewTime(monday10.Add(-48 * time.Hour))
		nc.Spec.ExpireAfter = "720h"
		nc.Spec.NodeClassRef = np.Spec.Template.Spec.NodeClassRef
		nc.Status.ProviderID, nc.Status.NodeName = "aws:///us-east-1a/i-"+name, "node-"+name
		nc.Status.Conditions = []state.Condition{
			{Type: "Initialized", Status: "True", LastTransitionTime: metav1.NewTime(monday10.Add(-47 * time.Hour))},
			{Type: "Consolidatable", Status: "True", LastTransitionTime: metav1.NewTime(monday10.Add(-46 * time.Hour))},
		}
		n := &corev1.Node{}
		n.Name = "node-" + name
		n.Labels = map[string]string{karpenter.NodePoolLabel: "business", karpenter.NodeInitializedLabel: "true"}
		n.Spec.ProviderID = nc.Status.ProviderID
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		w.claims, w.nodes = append(w.claims, nc), append(w.nodes, n)
	}
	w.pods = []*state.Pod{pod("shop", "web-1", "web")}
	return w
}

func pod(ns, name, app string) *state.Pod {
	p := &state.Pod{}
	p.Namespace, p.Name, p.Labels = ns, name, map[string]string{"app": app}
	p.Spec.NodeName = "node-business-0"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []state.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

func pdb(ns, app string, allowed int32) *state.PodDisruptionBudget {
	b := &state.PodDisruptionBudget{}
	b.Namespace, b.Name = ns, app
	b.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	b.Status = state.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
	return b
}

func (w *world) claim() *state.NodeClaim { return w.claims[w.target] }
func (w *world) node() *corev1.Node      { return w.nodes[w.target] }

func (w *world) drifted(reason string, since time.Time) *world {
	w.claim().Status.Conditions = append(w.claim().Status.Conditions, state.Condition{Type: "Drifted", Status: "True", Reason: reason, LastTransitionTime: metav1.NewTime(since)})
	return w
}

func (w *world) input() Input {
	in := Input{NodeClaim: w.claim(), Node: w.node(), PoolName: "business",
		Pool: state.Pool{NodePool: w.pool, NodeClaims: w.claims, Nodes: w.nodes, NodeClasses: map[string]*state.EC2NodeClass{}},
		Pods: w.pods, PDBs: state.GroupPDBs(w.pdbs)}
	if w.pool == nil {
		in.Pool = state.Pool{}
	}
	return in
}

const (
	defaultBudget  = `[{"nodes":"10%"}]`
	businessHours  = `[{"nodes":"20%"},{"nodes":"0","schedule":"0 9 * * mon-fri","duration":"8h","reasons":["Drifted"]}]`
	invalidCron    = `[{"nodes":"0","schedule":"0 9 * * sat-sun","duration":"1h"}]`
	noBudgetAtAll  = `[]`
	driftFrozenOne = `[{"nodes":"10%"},{"nodes":"0","reasons":["Drifted"]}]`
)

// kinds summarises an explanation as "every:kind,..." and "Reason:kind,...".
func kinds(e *Explanation) []string {
	var out []string
	var every []string
	for _, s := range e.StopsEveryReason {
		every = append(every, string(s.Kind))
	}
	out = append(out, "every:"+strings.Join(every, ","))
	for _, r := range e.Reasons {
		var ks []string
		for _, s := range r.Stops {
			ks = append(ks, string(s.Kind))
		}
		out = append(out, string(r.Reason)+":"+strings.Join(ks, ","))
	}
	return out
}

func TestExplainNamesEveryBlockingCause(t *testing.T) {
	tests := []struct {
		name    string
		budgets string
		change  func(w *world)
		want    []string // every, Underutilized, Empty, Drifted (Karpenter v1.14)
	}{
		{"a drifted node with nothing in its way", defaultBudget, func(w *world) { w.drifted("AMIDrift", monday10.Add(-time.Hour)) },
			[]string{"every:", "Underutilized:", "Empty:not-empty", "Drifted:"}},
		{"not drifted", defaultBudget, nil, []string{"every:", "Underutilized:", "Empty:not-empty", "Drifted:not-drifted"}},
		{"an empty node", defaultBudget, func(w *world) { w.pods = nil }, []string{"every:", "Underutilized:empty", "Empty:", "Drifted:not-drifted"}},
		{"DaemonSet pods leave a node empty", defaultBudget, func(w *world) {
			w.pods[0].OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet"}}
		}, []string{"every:", "Underutilized:empty", "Empty:", "Drifted:not-drifted"}},
		{"not initialized", defaultBudget, func(w *world) { delete(w.node().Labels, karpenter.NodeInitializedLabel) },
			[]string{"every:not-initialized", "Underutilized:", "Empty:not-empty", "Drifted:not-drifted"}},
		{"do-not-disrupt on the node", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.node().Annotations = map[string]string{karpenter.DoNotDisruptAnnotation: "true"}
		}, []string{"every:do-not-disrupt-node", "Underutilized:", "Empty:not-empty", "Drifted:"}},
		{"do-not-disrupt on the NodeClaim counts only before the node registers", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.claim().Annotations = map[string]string{karpenter.DoNotDisruptAnnotation: "true"}
		}, []string{"every:", "Underutilized:", "Empty:not-empty", "Drifted:"}},
		{"do-not-disrupt on a pod", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.pods[0].Annotations = map[string]string{karpenter.DoNotDisruptAnnotation: "true"}
		}, []string{"every:", "Underutilized:pods", "Empty:not-empty,pods", "Drifted:pods"}},
		{"a PodDisruptionBudget at zero", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.pdbs = []*state.PodDisruptionBudget{pdb("shop", "web", 0)}
		}, []string{"every:", "Underutilized:pods", "Empty:not-empty,pods", "Drifted:pods"}},
		{"terminationGracePeriod lets drift past blocking pods", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.pdbs = []*state.PodDisruptionBudget{pdb("shop", "web", 0)}
			w.claim().Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
		}, []string{"every:", "Underutilized:pods", "Empty:not-empty,pods", "Drifted:"}},
		{"being deleted", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.claim().DeletionTimestamp = &metav1.Time{Time: monday10.Add(-time.Minute)}
		}, []string{"every:deleting", "Underutilized:budget", "Empty:not-empty,budget", "Drifted:budget"}}, // it uses the budget itself
		{"already disrupting", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.node().Spec.Taints = []corev1.Taint{{Key: karpenter.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}}
		}, []string{"every:disrupting", "Underutilized:budget", "Empty:not-empty,budget", "Drifted:budget"}},
		{"the budget window holds drift", businessHours, func(w *world) { w.drifted("NodePoolDrifted", monday10) },
			[]string{"every:", "Underutilized:", "Empty:not-empty", "Drifted:budget"}},
		{"other nodes disrupting use the budget up", defaultBudget, func(w *world) {
			w.drifted("AMIDrift", monday10)
			w.nodes[3].Status.Conditions[0].Status = corev1.ConditionFalse
		}, []string{"every:", "Underutilized:budget", "Empty:not-empty,budget", "Drifted:budget"}},
		{"an invalid cron blocks every reason", invalidCron, func(w *world) { w.drifted("AMIDrift", monday10) },
			[]string{"every:", "Underutilized:budgets-invalid", "Empty:not-empty,budgets-invalid", "Drifted:budgets-invalid"}},
		{"budgets: [] is unlimited", noBudgetAtAll, func(w *world) { w.drifted("AMIDrift", monday10) },
			[]string{"every:", "Underutilized:", "Empty:not-empty", "Drifted:"}},
		{"consolidation off", defaultBudget, func(w *world) { w.pool.Spec.Disruption.ConsolidateAfter = "Never" },
			[]string{"every:", "Underutilized:consolidation-disabled", "Empty:consolidation-disabled", "Drifted:not-drifted"}},
		{"not consolidatable yet", defaultBudget, func(w *world) { w.claim().Status.Conditions[1].Status = "False" },
			[]string{"every:", "Underutilized:not-consolidatable", "Empty:not-empty,not-consolidatable", "Drifted:not-drifted"}},
		{"WhenEmpty", defaultBudget, func(w *world) { w.pool.Spec.Disruption.ConsolidationPolicy = karpenter.ConsolidationWhenEmpty },
			[]string{"every:", "Underutilized:when-empty", "Empty:not-empty", "Drifted:not-drifted"}},
		{"a static NodePool", defaultBudget, func(w *world) { n := int64(5); w.pool.Spec.Replicas = &n },
			[]string{"every:", "Underutilized:static-nodepool", "Empty:static-nodepool", "Drifted:not-drifted"}},
		{"the NodePool is gone", defaultBudget, func(w *world) { w.pool = nil },
			[]string{"every:no-nodepool", "Underutilized:", "Empty:", "Drifted:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.budgets)
			if tt.change != nil {
				tt.change(w)
			}
			in := w.input()
			in.Reasons = v114(t)
			e := Explain(in, monday10)
			if got := kinds(e); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stops = %q\n        want %q", got, tt.want)
			}
			for _, r := range e.Reasons {
				if want := len(e.StopsFor(r.Reason)) == 0 && len(r.Stops) == 0; r.Candidate != want {
					t.Errorf("%s: candidate %v with stops %+v", r.Reason, r.Candidate, r.Stops)
				}
				for _, s := range r.Stops {
					if s.Message == "" {
						t.Errorf("%s stop %s has no message", r.Reason, s.Kind)
					}
				}
			}
		})
	}
}

// v114 are the reasons of Karpenter v1.0 to v1.14: no node repair.
func v114(t *testing.T) []budget.Reason {
	t.Helper()
	r, err := budget.ReasonsOf("v1.14")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExplainSaysWhenTheBudgetNextAllowsOne(t *testing.T) {
	w := newWorld(t, businessHours).drifted("NodePoolDrifted", monday10)
	e := Explain(w.input(), monday10)
	d := e.Reasons[2]
	if d.Reason != budget.Drifted || len(d.Stops) != 1 {
		t.Fatalf("Drifted = %+v", d)
	}
	five := monday10.Add(7 * time.Hour)
	if d.Stops[0].Until == nil || !d.Stops[0].Until.Equal(five) || d.Budget.NextAllowed == nil || !d.Budget.NextAllowed.Equal(five) {
		t.Errorf("next allowed = %v / %v, want %s", d.Stops[0].Until, d.Budget.NextAllowed, five)
	}
	if want := `budgets[1] (nodes "0", "0 9 * * mon-fri" for 8h, Drifted) allows no Drifted disruption now`; d.Stops[0].Message != want {
		t.Errorf("message = %q\n     want %q", d.Stops[0].Message, want)
	}
}

func TestExplainRecognisesKarpgatesOwnHolds(t *testing.T) {
	for _, by := range []string{"", holdrecord.ByFreeze} {
		w := newWorld(t, driftFrozenOne).drifted("AMIDrift", monday10)
		record, _ := json.Marshal(holdrecord.Marker{Budget: holdrecord.Budget(), Index: 1, Since: monday10.Add(-time.Hour), Reason: "bad AMI", By: by})
		w.pool.Annotations = map[string]string{karpenter.RolloutGuardAnnotation: string(record)}
		d := Explain(w.input(), monday10).Reasons[2]
		want, resume := "rollout-guard", "it is karpgate's rollout guard hold: `karpgate resume business` lifts it"
		if by == holdrecord.ByFreeze {
			want, resume = holdrecord.ByFreeze, "it is karpgate's freeze: `karpgate resume business` (or --all) lifts it"
		}
		if d.Budget.Hold != want || len(d.Stops) != 1 || !strings.Contains(d.Stops[0].Message, resume) {
			t.Errorf("by %q: hold %q, stops %+v", by, d.Budget.Hold, d.Stops)
		}
	}
}

func TestExplainAnUnmanagedNodeAndANodeClaimWithoutNode(t *testing.T) {
	n := &corev1.Node{}
	n.Name = "plain"
	e := Explain(Input{Node: n}, monday10)
	if got := kinds(e); !reflect.DeepEqual(got, []string{"every:not-managed", "Underutilized:", "Empty:", "Drifted:", "Unhealthy:"}) || e.Candidate(budget.Drifted) || e.Candidate(budget.Unhealthy) {
		t.Errorf("unmanaged node: %q", got)
	}
	w := newWorld(t, defaultBudget)
	in := w.input()
	in.Node, in.Pods = nil, nil
	if got := kinds(Explain(in, monday10)); got[0] != "every:no-node" {
		t.Errorf("NodeClaim without node: %q", got)
	}
}

func TestExplainExpiry(t *testing.T) {
	w := newWorld(t, defaultBudget)
	e := Explain(w.input(), monday10)
	if x := e.Expiry; x.ExpiresAt == nil || !x.ExpiresAt.Equal(monday10.Add(-48*time.Hour+720*time.Hour)) || x.Expired {
		t.Errorf("expiry = %+v", x)
	}
	w.claim().Spec.ExpireAfter = "Never"
	w.claim().Spec.TerminationGracePeriod = &metav1.Duration{Duration: 2 * time.Hour}
	w.claim().DeletionTimestamp = &metav1.Time{Time: monday10.Add(-time.Hour)}
	x := Explain(w.input(), monday10).Expiry
	if x.ExpiresAt != nil || x.TerminationGracePeriod != "2h0m0s" || x.DrainDeadline == nil || !x.DrainDeadline.Equal(monday10.Add(time.Hour)) {
		t.Errorf("expiry = %+v", x)
	}
}

// TestWriteGolden renders a node held by everything at once: a business
// hours drift window, a do-not-disrupt pod, a PodDisruptionBudget at zero,
// a pod whose annotation Karpenter ignores and another node disrupting.
func TestWriteGolden(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, businessHours).drifted("AMIDrift", monday10.Add(-3*time.Hour))
	db := pod("shop", "db-0", "db")
	db.Annotations = map[string]string{karpenter.DoNotDisruptAnnotation: "true"}
	cache := pod("shop", "cache-0", "cache")
	cache.Annotations = map[string]string{karpenter.DoNotDisruptAnnotation: "yes"}
	w.pods = append(w.pods, db, cache)
	w.pdbs = []*state.PodDisruptionBudget{pdb("shop", "web", 0)}
	w.nodes[4].Spec.Taints = []corev1.Taint{{Key: karpenter.DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}}
	e := Explain(w.input(), monday10)
	r, exact, err := release.Lookup("v1.15")
	if err != nil {
		t.Fatal(err)
	}
	judged := release.ForRelease(r, exact, "CRDs in cluster https://203.0.113.10:6443").Summary()
	e.Judged = &judged
	var text, textParis, js bytes.Buffer
	if err := WriteText(&text, e, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&textParis, e, paris); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, e); err != nil {
		t.Fatal(err)
	}
	goldenfile.Assert(t, filepath.Join("testdata", "held.txt"), text.Bytes())
	goldenfile.Assert(t, filepath.Join("testdata", "held-paris.txt"), textParis.Bytes())
	goldenfile.Assert(t, filepath.Join("testdata", "held.json"), js.Bytes())
	var back Explanation
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Candidate(budget.Drifted) || len(back.Pods.Blockers) != 2 {
		t.Errorf("the JSON does not read back: %v %+v", err, back.Reasons)
	}
}
