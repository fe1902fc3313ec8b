package controller

import (
	"sync/atomic"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"

	"github.com/karpgate/karpgate/policies"
)

// Event reason and action of the audit's Events.
const (
	ReasonPolicyViolation = "PolicyViolation"
	actionAudit           = "Audit"
)

// eventSender records an Event on an object that newly breaks a deny
// rule, at most a burst at a time: a configuration change that denies
// thousands of objects must not flood the API server with Events (the
// reports and metrics list them all).
type eventSender struct {
	recorder events.EventRecorder
	limiter  *rate.Limiter
	sent     atomic.Int64
	dropped  atomic.Int64
}

func newEventSender(recorder events.EventRecorder, perSecond float64) *eventSender {
	return &eventSender{recorder: recorder, limiter: rate.NewLimiter(rate.Limit(perSecond), max(1, int(perSecond*10)))}
}

func (e *eventSender) denied(s *Stored, f policies.Finding) {
	if !e.limiter.Allow() {
		e.dropped.Add(1)
		return
	}
	regarding := &unstructured.Unstructured{}
	regarding.SetAPIVersion(s.APIVersion)
	regarding.SetKind(s.Kind)
	regarding.SetName(s.Name)
	regarding.SetUID(s.UID)
	e.recorder.Eventf(regarding, nil, corev1.EventTypeWarning, ReasonPolicyViolation, actionAudit, "%s", note(f))
	e.sent.Add(1)
}

// maxNote is the most an Event's note may hold (events.k8s.io/v1).
const maxNote = 1024

func note(f policies.Finding) string {
	const suffix = " [karpgate's rules deny this now; found by the audit of stored objects]"
	n := f.String()
	if len(n)+len(suffix) > maxNote {
		n = n[:maxNote-len(suffix)-len("…")] + "…"
	}
	return n + suffix
}
