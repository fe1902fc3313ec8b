package rolloutplan

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/rolloutplan/progress"
)

// record writes Step's Events on the plan and on the NodePools each names,
// so that `kubectl events --for nodepool/NAME` says why a NodePool's wave
// started, soaked or failed.
func (r *reconciler) record(plan *v1alpha1.RolloutPlan, in progress.Input, evs []progress.Event) {
	for _, e := range evs {
		typ := corev1.EventTypeNormal
		if e.Warning {
			typ = corev1.EventTypeWarning
		}
		r.recorder.Eventf(plan, nil, typ, e.Reason, e.Reason, "%s", e.Note)
		for _, pool := range e.NodePools {
			r.onPool(in, pool, typ, e.Reason, "rollout plan %s: %s", plan.Name, e.Note)
		}
	}
}

// onPool records an Event on a NodePool of the plan.
func (r *reconciler) onPool(in progress.Input, pool, typ, reason, format string, args ...any) {
	p, ok := in.NodePools[pool]
	if !ok || p.State.NodePool == nil {
		return
	}
	r.recorder.Eventf(p.State.NodePool, nil, typ, reason, reason, format, args...)
}
