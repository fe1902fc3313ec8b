package progress

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/rolloutplan/gates"
	"github.com/karpgate/karpgate/disruption/state"
)

// maxTransitions bounds the transitions of one Step; each pass of the
// loop moves the plan forward, so the bound is never reached in practice.
const maxTransitions = 64

type stepper struct {
	in   Input
	spec *v1alpha1.RolloutPlanSpec
	now  time.Time
	st   v1alpha1.RolloutPlanStatus
	out  Output
	cur  int
	// abortNow: the abort was handled in this step, so the rolling wave is
	// held once; later steps leave every hold as it is.
	abortNow bool
}

// Step computes the plan's next status and what to do; see the package
// documentation for the rules.
func Step(in Input) Output {
	s := &stepper{in: in, spec: &in.Plan.Spec, now: in.Now}
	in.Plan.Status.DeepCopyInto(&s.st)
	if s.st.Phase == "" {
		s.st.Phase = v1alpha1.PhaseIdle
	}
	s.syncWaves()
	s.handleRequests()
	for i := 0; i < maxTransitions; i++ {
		if !s.transition() {
			break
		}
	}
	s.out.Holds = s.holds()
	s.setConditions()
	s.st.ObservedGeneration = in.Plan.Generation
	s.out.Status = s.st
	return s.out
}

// at is a status instant: whole seconds, as the API server stores them.
func (s *stepper) at() *metav1.Time {
	t := metav1.NewTime(s.now.Truncate(time.Second))
	return &t
}

func (s *stepper) event(warning bool, reason string, pools []string, format string, args ...any) {
	s.out.Events = append(s.out.Events, Event{Warning: warning, Reason: reason, Note: fmt.Sprintf(format, args...), NodePools: pools})
}

func (s *stepper) wake(at time.Time) {
	if at.IsZero() {
		return
	}
	if s.out.Wake.IsZero() || at.Before(s.out.Wake) {
		s.out.Wake = at
	}
}

// syncWaves lays the status's waves out in spec order with what the
// NodePools show now, keeping each wave's progress by name.
func (s *stepper) syncWaves() {
	prev := map[string]v1alpha1.WaveStatus{}
	for _, w := range s.st.Waves {
		prev[w.Name] = w
	}
	s.st.Waves = make([]v1alpha1.WaveStatus, len(s.spec.Waves))
	s.cur = -1
	for i, w := range s.spec.Waves {
		ws, seen := prev[w.Name]
		if !seen {
			ws = v1alpha1.WaveStatus{Name: w.Name, Phase: v1alpha1.WaveWaiting}
		}
		var pools []string
		if i < len(s.in.Waves) {
			pools = s.in.Waves[i]
		}
		ws.NodePools, ws.Frozen, ws.Rolling = pools, nil, nil
		var claims, drifted int32
		for _, name := range pools {
			p := s.in.NodePools[name]
			claims += int32(p.NodeClaims) //nolint:gosec // counts of objects
			drifted += int32(p.Drifted)   //nolint:gosec // counts of objects
			if p.Holder == HeldByFreeze {
				ws.Frozen = append(ws.Frozen, name)
			}
		}
		if ws.Phase == v1alpha1.WaveRolling || ws.Phase == v1alpha1.WaveSoaking {
			ws.Replaced += max(ws.Drifted-drifted, 0)
		}
		ws.NodeClaims, ws.Drifted = claims, drifted
		s.st.Waves[i] = ws
		if w.Name == s.st.CurrentWave {
			s.cur = i
		}
	}
	s.st.Conflicts = s.in.Conflicts
	if s.cur < 0 {
		// A new plan, or its current wave was renamed or removed: start
		// over, from what the NodePools show.
		s.cur = 0
		if s.st.Phase != v1alpha1.PhaseIdle && s.st.Phase != v1alpha1.PhaseAborted {
			s.st.Phase = v1alpha1.PhaseIdle
			s.st.StartedAt = nil
		}
	}
	if len(s.st.Waves) > 0 {
		s.st.CurrentWave = s.st.Waves[s.cur].Name
	}
}

func (s *stepper) wave() *v1alpha1.WaveStatus { return &s.st.Waves[s.cur] }

func (s *stepper) drifted(i int) int32 { return s.st.Waves[i].Drifted }

// handleRequests acts on new abort and retry annotations, the older first.
func (s *stepper) handleRequests() {
	abort := s.in.Plan.Annotations[v1alpha1.AbortAnnotation]
	retry := s.in.Plan.Annotations[v1alpha1.RetryAnnotation]
	newAbort := abort != "" && abort != s.st.HandledAbort
	newRetry := retry != "" && retry != s.st.HandledRetry
	if newAbort && newRetry && retry < abort {
		s.retry(retry)
		s.abort(abort)
		return
	}
	if newAbort {
		s.abort(abort)
	}
	if newRetry {
		s.retry(retry)
	}
}

func (s *stepper) abort(request string) {
	s.st.HandledAbort = request
	if s.st.Phase == v1alpha1.PhaseAborted {
		return
	}
	s.st.Phase = v1alpha1.PhaseAborted
	s.abortNow = true
	s.st.Failure = &v1alpha1.Failure{Wave: s.wave().Name, Reason: v1alpha1.ReasonAborted, At: *s.at(),
		Message: "aborted on request (" + request + "); every NodePool of the plan stays held until `karpgate resume` lifts it or `karpgate rollout resume` retries the wave"}
	s.event(true, EventRolloutAborted, s.in.Waves.All(), "rollout aborted at wave %s on request; every NodePool of the plan stays held", s.wave().Name)
}

func (s *stepper) retry(request string) {
	s.st.HandledRetry = request
	if s.st.Phase != v1alpha1.PhaseFailed && s.st.Phase != v1alpha1.PhaseAborted {
		return
	}
	s.st.Failure = nil
	s.event(false, EventRolloutRetried, s.wave().NodePools, "wave %s rolls again on request; only NodeClaims launched from now on are judged", s.wave().Name)
	if s.st.StartedAt == nil {
		s.st.Phase = v1alpha1.PhaseIdle
		return
	}
	s.st.Phase = v1alpha1.PhaseRolling
	w := s.wave()
	w.Phase, w.StartedAt, w.SoakStartedAt, w.SoakEndsAt, w.CompletedAt = v1alpha1.WaveRolling, s.at(), nil, nil, nil
}

// transition makes one move; false when the plan stays where it is.
func (s *stepper) transition() bool {
	switch s.st.Phase {
	case v1alpha1.PhaseIdle:
		if s.anyDrift(0, len(s.st.Waves)) {
			s.startPass(EventRolloutStarted, "drift to roll in")
			return true
		}
		return false
	case v1alpha1.PhaseRolling, v1alpha1.PhaseSoaking:
		if j := s.newDriftBefore(s.cur); j >= 0 {
			s.startPass(EventRolloutRestarted, fmt.Sprintf("new drift in wave %s, which was done", s.st.Waves[j].Name))
			return true
		}
		return s.judge()
	case v1alpha1.PhasePaused:
		if s.spec.Paused {
			return false
		}
		s.startFrom(s.cur + 1)
		return true
	}
	return false // Failed, Aborted: only a request moves them
}

func (s *stepper) anyDrift(from, to int) bool {
	for i := from; i < to; i++ {
		if s.drifted(i) > 0 {
			return true
		}
	}
	return false
}

// newDriftBefore returns the first wave before cur that is done and has
// drift newer than its completion: a change that arrived after it.
func (s *stepper) newDriftBefore(cur int) int {
	for j := 0; j < cur; j++ {
		w := s.st.Waves[j]
		if w.Phase != v1alpha1.WaveDone || w.CompletedAt == nil {
			continue
		}
		done := w.CompletedAt.Truncate(time.Second)
		for _, name := range w.NodePools {
			p := s.in.NodePools[name]
			if p.Drifted > 0 && !p.NewestDrift.Before(done) {
				return j
			}
		}
	}
	return -1
}

// startPass begins a pass through the waves from the first.
func (s *stepper) startPass(reason, why string) {
	for i := range s.st.Waves {
		w := &s.st.Waves[i]
		w.Phase, w.StartedAt, w.SoakStartedAt, w.SoakEndsAt, w.CompletedAt, w.Replaced, w.Gates = v1alpha1.WaveWaiting, nil, nil, nil, nil, 0, nil
	}
	s.st.StartedAt, s.st.Failure = s.at(), nil
	s.event(false, reason, nil, "a pass through the waves starts: %s", why)
	s.startFrom(0)
}

// startFrom releases the first wave from i on with drift; waves with
// nothing drifted pass at once. Past the last wave the pass is complete,
// unless an earlier wave has drift again, which starts a new pass.
func (s *stepper) startFrom(i int) {
	for j := i; j < len(s.st.Waves); j++ {
		w := &s.st.Waves[j]
		if w.Drifted > 0 {
			s.cur = j
			s.st.CurrentWave = w.Name
			s.st.Phase = v1alpha1.PhaseRolling
			w.Phase, w.StartedAt, w.SoakStartedAt, w.SoakEndsAt, w.CompletedAt, w.Replaced = v1alpha1.WaveRolling, s.at(), nil, nil, nil, 0
			s.event(false, EventWaveStarted, w.NodePools, "wave %s starts: %d drifted NodeClaim(s) in %s", w.Name, w.Drifted, strings.Join(w.NodePools, ", "))
			return
		}
		if w.Phase != v1alpha1.WaveDone {
			w.Phase, w.CompletedAt = v1alpha1.WaveDone, s.at()
		}
	}
	if i > 0 && s.anyDrift(0, len(s.st.Waves)) {
		s.startPass(EventRolloutRestarted, "drift left in a wave that was done")
		return
	}
	if s.st.StartedAt != nil {
		s.event(false, EventRolloutComplete, nil, "every wave is done (pass started %s)", s.st.StartedAt.UTC().Format(time.RFC3339))
		s.st.CompletedAt = s.at()
	}
	s.st.Phase, s.st.StartedAt, s.cur = v1alpha1.PhaseIdle, nil, 0
	if len(s.st.Waves) > 0 {
		s.st.CurrentWave = s.st.Waves[0].Name
	}
}

// judge runs the current wave's gates and moves it: failed, rolling,
// soaking, done.
func (s *stepper) judge() bool {
	w := s.wave()
	since := s.now
	if w.StartedAt != nil {
		since = w.StartedAt.Time
	}
	pools := make([]state.Pool, 0, len(w.NodePools))
	for _, name := range w.NodePools {
		if p, ok := s.in.NodePools[name]; ok && p.State.NodePool != nil {
			pools = append(pools, p.State)
		}
	}
	g := gates.Evaluate(pools, since, s.spec.GatesOf(s.cur), s.now)
	w.Gates = g.Gates
	s.wake(g.Next)
	if g.Failure != nil {
		s.fail(g.Failure)
		return false
	}
	if w.Drifted > 0 || g.Waiting {
		if s.st.Phase == v1alpha1.PhaseSoaking {
			s.st.Phase, w.Phase, w.SoakStartedAt, w.SoakEndsAt = v1alpha1.PhaseRolling, v1alpha1.WaveRolling, nil, nil
		}
		return false
	}
	if s.st.Phase == v1alpha1.PhaseRolling || w.SoakEndsAt == nil {
		end := metav1.NewTime(ceilSecond(s.now.Add(s.spec.SoakOf(s.cur))))
		s.st.Phase, w.Phase, w.SoakStartedAt, w.SoakEndsAt = v1alpha1.PhaseSoaking, v1alpha1.WaveSoaking, s.at(), &end
		s.event(false, EventWaveSoaking, w.NodePools, "wave %s is replaced (%d drifted NodeClaim(s)); it soaks until %s", w.Name, w.Replaced, end.UTC().Format(time.RFC3339))
	}
	if s.now.Before(w.SoakEndsAt.Time) {
		s.wake(w.SoakEndsAt.Time)
		return false
	}
	w.Phase, w.CompletedAt = v1alpha1.WaveDone, s.at()
	s.event(false, EventWaveDone, w.NodePools, "wave %s is done: replaced and healthy for its soak of %s", w.Name, s.spec.SoakOf(s.cur))
	if s.spec.Paused && s.cur+1 < len(s.st.Waves) {
		s.st.Phase = v1alpha1.PhasePaused
		s.event(false, EventRolloutPaused, nil, "wave %s is done; spec.paused holds wave %s (`karpgate rollout resume %s` releases it)", w.Name, s.st.Waves[s.cur+1].Name, s.in.Plan.Name)
		return false
	}
	s.startFrom(s.cur + 1)
	return true
}

func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

func (s *stepper) fail(f *gates.Failure) {
	w := s.wave()
	s.st.Phase, w.Phase = v1alpha1.PhaseFailed, v1alpha1.WaveFailed
	s.st.Failure = &v1alpha1.Failure{Wave: w.Name, Reason: f.Reason, Message: f.Gate + ": " + f.Message, At: *s.at()}
	s.event(true, EventGateFailed, w.NodePools, "wave %s failed its %s gate, so every NodePool of the plan is held: %s; `karpgate rollout resume %s` retries the wave", w.Name, f.Gate, f.Message, s.in.Plan.Name)
}
