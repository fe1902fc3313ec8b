package admission

import (
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies"
)

// Webhook names, as metric labels.
const (
	validating = "validate"
	mutating   = "mutate"
)

// Verdicts, as metric labels.
const (
	verdictAllowed = "allowed"
	verdictDenied  = "denied"
	verdictPatched = "patched"
	verdictError   = "error"
	verdictSkipped = "skipped"
)

// What a finding did, as metric labels.
const (
	actionDeny          = "deny"
	actionWarn          = "warn"
	actionGrandfathered = "grandfathered"
	actionWaived        = "waived"
	actionMutate        = "mutate"
	actionAudit         = "audit"
	// A warning left to the API server's twin of the rule.
	actionTwin = "twin"
)

var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_admission_requests_total",
		Help: "Admission requests by webhook (validate, mutate), kind (NodePool, NodeClaim, EC2NodeClass or other), operation (CREATE, UPDATE, DELETE, CONNECT or other), verdict (allowed, denied, patched, error, skipped) and dry_run.",
	}, []string{"webhook", "kind", "operation", "verdict", "dry_run"})
	findingsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karpgate_admission_decisions_total",
		Help: "Findings acted on at admission, by webhook, rule, action (deny, warn, audit, grandfathered, waived, mutate, twin: a warning the API server's CEL twin of the rule gives instead) and dry_run; audit findings are counted here and never shown to the client.",
	}, []string{"webhook", "rule", "action", "dry_run"})
	evaluationSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karpgate_admission_evaluation_seconds",
		Help:    "Time spent evaluating policies per admission request, by webhook; request latency per endpoint is controller_runtime_webhook_latency_seconds.",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"webhook"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(requestsTotal, findingsTotal, evaluationSeconds)
}

func countRequest(webhook string, r review, verdict string) {
	requestsTotal.WithLabelValues(webhook, kindLabel(r.kind), operationLabel(r.operation), verdict, strconv.FormatBool(r.dryRun)).Inc()
}

// otherLabel stands for any kind or operation karpgate does not know: the
// request names them, and a label must not take every value a client
// sends.
const otherLabel = "other"

func kindLabel(kind string) string {
	for _, k := range slices.Concat(karpenter.Kinds, karpenter.RuleOnlyKinds) {
		if k.Kind == kind {
			return kind
		}
	}
	return otherLabel
}

func operationLabel(op policies.Operation) string {
	switch admissionv1.Operation(op) {
	case admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect:
		return string(op)
	}
	return otherLabel
}

func countFinding(webhook string, r review, rule, action string) {
	findingsTotal.WithLabelValues(webhook, rule, action, strconv.FormatBool(r.dryRun)).Inc()
}
