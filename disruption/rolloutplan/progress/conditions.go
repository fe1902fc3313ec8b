package progress

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
)

// setConditions writes Ready, Reconciling and Stalled for the phase.
func (s *stepper) setConditions() {
	gen := s.in.Plan.Generation
	set := func(t string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&s.st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: *s.at()})
	}
	w := s.wave()
	switch s.st.Phase {
	case v1alpha1.PhaseIdle:
		reason := v1alpha1.ReasonIdle
		if s.st.CompletedAt != nil {
			reason = v1alpha1.ReasonRolloutComplete
		}
		msg := fmt.Sprintf("nothing to roll; the next change rolls in wave %s first, %d NodePool(s) held", w.Name, s.st.HeldNodePools)
		set(v1alpha1.ConditionReady, metav1.ConditionTrue, reason, msg)
		set(v1alpha1.ConditionReconciling, metav1.ConditionFalse, reason, msg)
		set(v1alpha1.ConditionStalled, metav1.ConditionFalse, reason, msg)
	case v1alpha1.PhaseRolling, v1alpha1.PhaseSoaking, v1alpha1.PhasePaused:
		reason, msg := v1alpha1.ReasonRolling, fmt.Sprintf("wave %s rolls: %d drifted NodeClaim(s) left, %d replaced", w.Name, w.Drifted, w.Replaced)
		switch s.st.Phase {
		case v1alpha1.PhaseSoaking:
			reason, msg = v1alpha1.ReasonSoaking, fmt.Sprintf("wave %s soaks until %s", w.Name, w.SoakEndsAt.UTC().Format(time.RFC3339))
		case v1alpha1.PhasePaused:
			reason, msg = v1alpha1.ReasonPaused, fmt.Sprintf("wave %s is done; spec.paused holds the next wave", w.Name)
		}
		if len(w.Frozen) > 0 {
			msg += "; frozen: " + strings.Join(w.Frozen, ", ")
		}
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
		set(v1alpha1.ConditionReconciling, metav1.ConditionTrue, reason, msg)
		set(v1alpha1.ConditionStalled, metav1.ConditionFalse, reason, msg)
	case v1alpha1.PhaseFailed, v1alpha1.PhaseAborted:
		f := s.st.Failure
		reason, msg := v1alpha1.ReasonAborted, "aborted"
		if f != nil {
			reason, msg = f.Reason, "wave "+f.Wave+": "+f.Message
		}
		set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
		set(v1alpha1.ConditionReconciling, metav1.ConditionFalse, reason, msg)
		set(v1alpha1.ConditionStalled, metav1.ConditionTrue, reason, msg)
	}
}
