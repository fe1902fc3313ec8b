package controller

import (
	"fmt"
	"strings"
	"sync/atomic"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"

	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/policies"
)

// Event reasons and action of the audit's Events.
const (
	ReasonPolicyViolation = "PolicyViolation"
	// ReasonReportTruncated: the object's reports leave results out;
	// ReasonReportSplit: its results take more than one report.
	ReasonReportTruncated = "ReportTruncated"
	ReasonReportSplit     = "ReportSplit"
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
	const suffix = " [karpgate's rules deny this now; found by the audit of stored objects]"
	e.send(s, ReasonPolicyViolation, clipNote(f.String(), suffix))
}

// reportLimited says that an object's results take more than one report,
// or that its reports leave some out.
func (e *eventSender) reportLimited(s *Stored, r report.Reports, limits report.Limits) {
	names := strings.Join(r.Names(), ", ")
	if n := r.OmittedCount(); n > 0 {
		e.send(s, ReasonReportTruncated, clipNote(fmt.Sprintf(
			"karpgate's audit left %d results out of this object's ClusterReports (%s): they do not fit in the %s an object's results may fill. "+
				"Every denial is listed, the first report's omitted-results entry counts the rest by rule, and `karpgate audit` lists them all", n, names, limits), ""))
		return
	}
	e.send(s, ReasonReportSplit, clipNote(fmt.Sprintf(
		"karpgate's audit results for this object do not fit one ClusterReport (--audit-report-max-bytes): they take %d, %s", len(r.Parts), names), ""))
}

func (e *eventSender) send(s *Stored, reason, note string) {
	if !e.limiter.Allow() {
		e.dropped.Add(1)
		return
	}
	regarding := &unstructured.Unstructured{}
	regarding.SetAPIVersion(s.APIVersion)
	regarding.SetKind(s.Kind)
	regarding.SetName(s.Name)
	regarding.SetUID(s.UID)
	e.recorder.Eventf(regarding, nil, corev1.EventTypeWarning, reason, actionAudit, "%s", note)
	e.sent.Add(1)
}

// maxNote is the most an Event's note may hold (events.k8s.io/v1).
const maxNote = 1024

// clipNote is n, cut to leave room for suffix, then suffix.
func clipNote(n, suffix string) string {
	if len(n)+len(suffix) > maxNote {
		n = n[:maxNote-len(suffix)-len("…")] + "…"
	}
	return n + suffix
}
