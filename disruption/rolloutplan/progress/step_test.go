package progress

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/rolloutplan/membership"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// fleet is the plan's NodePools as a test sets them: drifted NodeClaims
// and who holds each.
type fleet map[string]NodePool

func (f fleet) drift(pool string, n int, since time.Time) fleet {
	p := f[pool]
	p.Drifted, p.NewestDrift = n, since
	f[pool] = p
	return f
}

func (f fleet) holder(pool string, h Holder) fleet {
	p := f[pool]
	p.Holder = h
	f[pool] = p
	return f
}

func newFleet(names ...string) fleet {
	f := fleet{}
	for _, n := range names {
		f[n] = NodePool{Name: n, NodeClaims: 3, State: state.Pool{NodePool: &state.NodePool{ObjectMeta: metav1.ObjectMeta{Name: n}}}}
	}
	return f
}

func newPlan() *v1alpha1.RolloutPlan {
	return &v1alpha1.RolloutPlan{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Generation: 3, Annotations: map[string]string{}},
		Spec: v1alpha1.RolloutPlanSpec{Waves: []v1alpha1.Wave{
			{Name: "canary", Soak: metav1.Duration{Duration: 30 * time.Second}},
			{Name: "rest", Soak: metav1.Duration{Duration: 30 * time.Second}},
		}},
	}
}

var waves = membership.Waves{{"canary"}, {"a", "b"}}

// step runs Step and stores its status on the plan, as the controller does.
func step(t *testing.T, plan *v1alpha1.RolloutPlan, f fleet, now time.Time) Output {
	t.Helper()
	out := Step(Input{Plan: plan, Waves: waves, NodePools: f, Now: now})
	plan.Status = out.Status
	if out.Status.ObservedGeneration != plan.Generation {
		t.Errorf("observedGeneration %d, want %d", out.Status.ObservedGeneration, plan.Generation)
	}
	return out
}

func released(out Output) string {
	var names []string
	for n, w := range out.Holds {
		if w == Release {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func reasons(out Output) string {
	var r []string
	for _, e := range out.Events {
		r = append(r, e.Reason)
	}
	return strings.Join(r, ",")
}

func condition(plan *v1alpha1.RolloutPlan, t string) string {
	c := meta.FindStatusCondition(plan.Status.Conditions, t)
	if c == nil {
		return "missing"
	}
	return string(c.Status) + "/" + c.Reason
}

func expect(t *testing.T, plan *v1alpha1.RolloutPlan, out Output, phase v1alpha1.Phase, wave, rel, events string) {
	t.Helper()
	if plan.Status.Phase != phase || plan.Status.CurrentWave != wave || released(out) != rel || reasons(out) != events {
		t.Fatalf("phase %s wave %s released %q events %q; want %s %s %q %q\nstatus: %+v", plan.Status.Phase, plan.Status.CurrentWave, released(out), reasons(out), phase, wave, rel, events, plan.Status)
	}
}

// TestAWholeRollout walks one change through both waves, step by step.
func TestAWholeRollout(t *testing.T) {
	plan, f := newPlan(), newFleet("canary", "a", "b")
	out := step(t, plan, f, t0)
	expect(t, plan, out, v1alpha1.PhaseIdle, "canary", "canary", "")
	if got := condition(plan, v1alpha1.ConditionReady); got != "True/Idle" {
		t.Errorf("Ready %s", got)
	}
	if plan.Status.HeldNodePools != 2 {
		t.Errorf("held %d, want a and b", plan.Status.HeldNodePools)
	}

	// An EC2NodeClass change drifts every pool at once.
	f.drift("canary", 3, t0.Add(time.Minute)).drift("a", 3, t0.Add(time.Minute)).drift("b", 3, t0.Add(time.Minute)).holder("a", HeldByPlan).holder("b", HeldByPlan)
	out = step(t, plan, f, t0.Add(time.Minute))
	expect(t, plan, out, v1alpha1.PhaseRolling, "canary", "canary", "RolloutStarted,WaveStarted")
	if got := condition(plan, v1alpha1.ConditionReconciling); got != "True/Rolling" {
		t.Errorf("Reconciling %s", got)
	}

	f.drift("canary", 1, t0.Add(time.Minute))
	out = step(t, plan, f, t0.Add(2*time.Minute))
	expect(t, plan, out, v1alpha1.PhaseRolling, "canary", "canary", "")
	if w := plan.Status.Waves[0]; w.Drifted != 1 || w.Replaced != 2 {
		t.Errorf("canary drifted %d replaced %d, want 1 and 2", w.Drifted, w.Replaced)
	}

	f.drift("canary", 0, time.Time{})
	out = step(t, plan, f, t0.Add(3*time.Minute))
	expect(t, plan, out, v1alpha1.PhaseSoaking, "canary", "", "WaveSoaking")
	if want := t0.Add(3*time.Minute + 30*time.Second); !out.Wake.Equal(want) || !plan.Status.Waves[0].SoakEndsAt.Time.Equal(want) {
		t.Errorf("wake %v, soak ends %v; want both at %v", out.Wake, plan.Status.Waves[0].SoakEndsAt, want)
	}

	// Nothing changes until the soak ends; then the rest is released at once.
	out = step(t, plan, f, t0.Add(3*time.Minute+29*time.Second))
	expect(t, plan, out, v1alpha1.PhaseSoaking, "canary", "", "")
	out = step(t, plan, f, t0.Add(3*time.Minute+30*time.Second))
	expect(t, plan, out, v1alpha1.PhaseRolling, "rest", "a,b", "WaveDone,WaveStarted")

	f.drift("a", 0, time.Time{}).drift("b", 0, time.Time{})
	out = step(t, plan, f, t0.Add(5*time.Minute))
	expect(t, plan, out, v1alpha1.PhaseSoaking, "rest", "", "WaveSoaking")
	out = step(t, plan, f, t0.Add(6*time.Minute))
	expect(t, plan, out, v1alpha1.PhaseIdle, "canary", "canary", "WaveDone,RolloutComplete")
	if got := condition(plan, v1alpha1.ConditionReady); got != "True/RolloutComplete" || plan.Status.CompletedAt == nil || plan.Status.StartedAt != nil {
		t.Errorf("Ready %s, completed %v, started %v", got, plan.Status.CompletedAt, plan.Status.StartedAt)
	}
}

func TestStep(t *testing.T) {
	late := t0.Add(20 * time.Minute) // past the default nodeReadyTimeout
	rolling := func(plan *v1alpha1.RolloutPlan, f fleet) {
		f.drift("canary", 2, t0).drift("a", 2, t0).drift("b", 2, t0)
		Step(Input{Plan: plan, Waves: waves, NodePools: f, Now: t0})
		plan.Status = Step(Input{Plan: plan, Waves: waves, NodePools: f, Now: t0}).Status
	}
	for _, tc := range []struct {
		name          string
		setup         func(*v1alpha1.RolloutPlan, fleet)
		now           time.Time
		phase         v1alpha1.Phase
		wave          string
		released      string
		events        string
		stalledReason string
	}{
		{name: "a wave with nothing drifted passes at once", now: t0,
			setup: func(_ *v1alpha1.RolloutPlan, f fleet) { f.drift("a", 1, t0) },
			phase: v1alpha1.PhaseRolling, wave: "rest", released: "a", events: "RolloutStarted,WaveStarted"},
		{name: "maxRollingNodePools keeps the pool already rolling", now: t0,
			setup: func(p *v1alpha1.RolloutPlan, f fleet) {
				one := int32(1)
				p.Spec.MaxRollingNodePools = &one
				f.drift("a", 1, t0).drift("b", 1, t0).holder("a", HeldByPlan)
			},
			phase: v1alpha1.PhaseRolling, wave: "rest", released: "b", events: "RolloutStarted,WaveStarted"},
		{name: "drift of a reason the plan does not govern is released", now: t0,
			setup: func(_ *v1alpha1.RolloutPlan, f fleet) { a := f["a"]; a.Ungoverned = 2; f["a"] = a },
			phase: v1alpha1.PhaseIdle, wave: "canary", released: "a,canary"},
		{name: "a new NodeClaim not Ready in time fails the wave and holds everything", now: late,
			setup: func(p *v1alpha1.RolloutPlan, f fleet) {
				rolling(p, f)
				c := f["canary"]
				c.State.NodeClaims = []*state.NodeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "canary-new", CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))}}}
				f["canary"] = c
			},
			phase: v1alpha1.PhaseFailed, wave: "canary", events: "GateFailed", stalledReason: v1alpha1.ReasonNodesNotReady},
		{name: "an abort holds the rolling wave too", now: t0.Add(time.Minute),
			setup: func(p *v1alpha1.RolloutPlan, f fleet) {
				rolling(p, f)
				p.Annotations[v1alpha1.AbortAnnotation] = "2026-01-05T09:01:00Z"
			},
			phase: v1alpha1.PhaseAborted, wave: "canary", events: "RolloutAborted", stalledReason: v1alpha1.ReasonAborted},
		{name: "new drift in a done wave restarts at the canary", now: t0.Add(5 * time.Minute),
			setup: func(p *v1alpha1.RolloutPlan, f fleet) {
				f.drift("a", 2, t0)
				p.Status = Step(Input{Plan: p, Waves: waves, NodePools: f, Now: t0}).Status // canary passed at once, rest rolls
				f.drift("canary", 3, t0.Add(4*time.Minute))
			},
			phase: v1alpha1.PhaseRolling, wave: "canary", released: "canary", events: "RolloutRestarted,WaveStarted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, f := newPlan(), newFleet("canary", "a", "b")
			tc.setup(plan, f)
			out := step(t, plan, f, tc.now)
			expect(t, plan, out, tc.phase, tc.wave, tc.released, tc.events)
			stalled := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionStalled)
			if got := map[bool]string{true: stalled.Reason, false: ""}[stalled.Status == metav1.ConditionTrue]; got != tc.stalledReason {
				t.Errorf("Stalled reason %q, want %q", got, tc.stalledReason)
			}
		})
	}
}

// TestFailureRetryAbortPause: what each request does, in order.
func TestFailureRetryAbortPause(t *testing.T) {
	plan, f := newPlan(), newFleet("canary", "a", "b")
	f.drift("canary", 2, t0).drift("a", 2, t0).drift("b", 2, t0)
	step(t, plan, f, t0)
	stuck := &state.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "canary-new", CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))}}
	c := f["canary"]
	c.State.NodeClaims = []*state.NodeClaim{stuck}
	f["canary"] = c
	out := step(t, plan, f, t0.Add(20*time.Minute))
	expect(t, plan, out, v1alpha1.PhaseFailed, "canary", "", "GateFailed")
	if plan.Status.Failure == nil || !strings.Contains(plan.Status.Failure.Message, "canary-new") {
		t.Fatalf("failure %+v does not name the NodeClaim", plan.Status.Failure)
	}
	if out.Events[0].NodePools[0] != "canary" || !out.Events[0].Warning {
		t.Errorf("GateFailed event %+v, want a warning on canary", out.Events[0])
	}

	// Failed stays failed, whatever time passes.
	out = step(t, plan, f, t0.Add(time.Hour))
	expect(t, plan, out, v1alpha1.PhaseFailed, "canary", "", "")

	// A retry judges only NodeClaims launched after it: the stuck one no longer counts.
	plan.Annotations[v1alpha1.RetryAnnotation] = "2026-01-05T10:00:00Z"
	out = step(t, plan, f, t0.Add(time.Hour))
	expect(t, plan, out, v1alpha1.PhaseRolling, "canary", "canary", "RolloutRetried")
	out = step(t, plan, f, t0.Add(time.Hour+time.Second))
	expect(t, plan, out, v1alpha1.PhaseRolling, "canary", "canary", "")

	// Pause: the canary still finishes and soaks, then the plan waits.
	plan.Spec.Paused = true
	f.drift("canary", 0, time.Time{})
	out = step(t, plan, f, t0.Add(2*time.Hour))
	expect(t, plan, out, v1alpha1.PhaseSoaking, "canary", "", "WaveSoaking")
	out = step(t, plan, f, t0.Add(3*time.Hour))
	expect(t, plan, out, v1alpha1.PhasePaused, "canary", "", "WaveDone,RolloutPaused")
	if got := condition(plan, v1alpha1.ConditionReconciling); got != "True/Paused" {
		t.Errorf("Reconciling %s", got)
	}
	plan.Spec.Paused = false
	out = step(t, plan, f, t0.Add(3*time.Hour))
	expect(t, plan, out, v1alpha1.PhaseRolling, "rest", "a,b", "WaveStarted")

	// Abort: the rolling wave is held once, then nothing is touched.
	plan.Annotations[v1alpha1.AbortAnnotation] = "2026-01-05T12:00:00Z"
	out = step(t, plan, f, t0.Add(3*time.Hour))
	expect(t, plan, out, v1alpha1.PhaseAborted, "rest", "", "RolloutAborted")
	if out.Holds["a"] != Hold || plan.Status.HeldNodePools != 3 {
		t.Errorf("abort does not hold the rolling wave: %v, %d held", out.Holds, plan.Status.HeldNodePools)
	}
	out = step(t, plan, f, t0.Add(4*time.Hour))
	if want := map[string]Want{"canary": Leave, "a": Leave, "b": Leave}; !reflect.DeepEqual(out.Holds, want) {
		t.Errorf("an aborted plan changes holds: %v", out.Holds)
	}
	// The same request again is not a new one.
	out = step(t, plan, f, t0.Add(5*time.Hour))
	expect(t, plan, out, v1alpha1.PhaseAborted, "rest", "", "")
}

// TestStepContinuesFromStoredStatus: a new leader, given only the stored
// status (times in whole seconds, as the API server keeps them), makes the
// same decision at the soak's end as the replica that began it.
func TestStepContinuesFromStoredStatus(t *testing.T) {
	plan, f := newPlan(), newFleet("canary", "a", "b")
	f.drift("canary", 1, t0).drift("a", 1, t0)
	step(t, plan, f, t0.Add(500*time.Millisecond))
	f.drift("canary", 0, time.Time{})
	step(t, plan, f, t0.Add(2*time.Second+300*time.Millisecond))
	stored := plan.DeepCopy()
	end := stored.Status.Waves[0].SoakEndsAt.Time
	if end.Nanosecond() != 0 || end.Before(t0.Add(32*time.Second+300*time.Millisecond)) {
		t.Fatalf("soak ends %v: want whole seconds, no earlier than the soak", end)
	}
	out := Step(Input{Plan: stored, Waves: waves, NodePools: f, Now: end})
	stored.Status = out.Status
	expect(t, stored, out, v1alpha1.PhaseRolling, "rest", "a", "WaveDone,WaveStarted")
}

// The gates see Drifted NodeClaims through Observe, which counts only the
// reasons the plan governs.
func TestObserve(t *testing.T) {
	plan := newPlan()
	plan.Spec.DriftReasons = []v1alpha1.DriftReason{"AMIDrift"}
	drifted := func(name, reason string, at time.Time) *state.NodeClaim {
		return &state.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: state.NodeClaimStatus{Conditions: []state.Condition{{Type: karpenter.ConditionDrifted, Status: "True", Reason: reason, LastTransitionTime: metav1.NewTime(at)}}}}
	}
	p := state.Pool{NodePool: &state.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, NodeClaims: []*state.NodeClaim{
		drifted("x", "AMIDrift", t0), drifted("y", "AMIDrift", t0.Add(time.Minute)), drifted("z", "NodePoolDrifted", t0.Add(time.Hour)), {ObjectMeta: metav1.ObjectMeta{Name: "new"}},
	}, Nodes: []*corev1.Node{}}
	got := Observe(p, plan)
	if got.Drifted != 2 || got.Ungoverned != 1 || got.NodeClaims != 4 || !got.NewestDrift.Equal(t0.Add(time.Minute)) {
		t.Errorf("Observe = %+v", got)
	}
}
