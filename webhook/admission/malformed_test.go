package admission

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/policies"
)

// collectLabelValues gathers the values of the named labels of a metric
// from the registry karpgate serves.
func collectLabelValues(t *testing.T, metric string, labels ...string) []string {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, want := range labels {
					if l.GetName() == want {
						out = append(out, l.GetValue())
					}
				}
			}
		}
	}
	return out
}

// TestMalformedReviewsGetAClearError sends what the API server never would:
// every answer is an AdmissionReview refusing the request with a reason.
func TestMalformedReviewsGetAClearError(t *testing.T) {
	engines := newEngine(t, "")
	review := func(request string) []byte {
		return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":` + request + `}`)
	}
	tests := []struct {
		name, contentType string
		body              []byte
		wantCode          int32
		wantMessage       string
		mutateAdmits      bool
	}{
		{"empty body", "application/json", nil, http.StatusBadRequest, "the body is not an AdmissionReview with a request (no request.uid)", false},
		{"YAML", "application/json", []byte("kind: AdmissionReview"), http.StatusBadRequest, "the body is not an AdmissionReview with a request", false},
		{"not a review", "application/json", []byte(`{"hello":"world"}`), http.StatusBadRequest, "no request.uid", false},
		{"no request", "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), http.StatusBadRequest, "no request.uid", false},
		{"wrong content type", "text/plain", review(`{"uid":"1","operation":"CREATE"}`), http.StatusBadRequest, `Content-Type "text/plain": karpgate reads AdmissionReviews as application/json`, false},
		{"request is a string", "application/json", []byte(`{"request":"x"}`), http.StatusBadRequest, "request is a JSON string where an object belongs", false},
		{"apiVersion is a number", "application/json", []byte(`{"apiVersion":1}`), http.StatusBadRequest, "apiVersion is a JSON number where a string belongs", false},
		{"uid is a number", "application/json", review(`{"uid":5}`), http.StatusBadRequest, "request.uid is a JSON number where a string belongs", false},
		{"a list", "application/json", []byte(`[1]`), http.StatusBadRequest, "the body is a JSON array where an object belongs", false},
		{"truncated", "application/json", review(`{"uid":"1","operation":"CRE`), http.StatusBadRequest, "unexpected end of JSON input", false},
		{"no object", "application/json", review(`{"uid":"1","operation":"CREATE","kind":{"kind":"NodePool"},"name":"p"}`), http.StatusBadRequest, "the CREATE request for NodePool/p carries no object", true},
		{"object not an object", "application/json", review(`{"uid":"1","operation":"CREATE","kind":{"kind":"NodePool"},"name":"p","object":[1,2]}`), http.StatusBadRequest, "request.object of NodePool/p is not a JSON object: want a JSON object, got a list", true},
		{"old object not an object", "application/json", review(`{"uid":"1","operation":"UPDATE","kind":{"kind":"NodePool"},"name":"p","object":{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"}},"oldObject":"x"}`), http.StatusBadRequest, "request.oldObject of NodePool/p is not a JSON object", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := post(t, NewValidatingWebhook(engines, logr.Discard()), tt.body, tt.contentType)
			resp := got.Response
			if code != http.StatusOK || resp.Allowed || resp.Result == nil || resp.Result.Code != tt.wantCode || !strings.Contains(resp.Result.Message, tt.wantMessage) {
				t.Fatalf("HTTP %d, response %+v\nwant code %d and a message containing %q", code, resp.Result, tt.wantCode, tt.wantMessage)
			}
			// Clients read JSON, not Go: no type names reach them.
			for _, goText := range []string{"Go struct", "Go value", "v1.", "unversioned", "struct {"} {
				if strings.Contains(resp.Result.Message, goText) {
					t.Fatalf("the message speaks Go (%q): %s", goText, resp.Result.Message)
				}
			}
			// The mutating webhook refuses a body that is no review, but
			// admits, with a warning and unchanged, a review whose object
			// it cannot read: mutations are conveniences.
			_, mutated := post(t, NewMutatingWebhook(engines, logr.Discard()), tt.body, tt.contentType)
			m := mutated.Response
			if m.Patch != nil || m.Allowed != tt.mutateAdmits {
				t.Fatalf("mutating webhook: allowed %v, patch %s; want allowed %v and no patch", m.Allowed, m.Patch, tt.mutateAdmits)
			}
			if m.Allowed && (len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], tt.wantMessage)) {
				t.Fatalf("mutating webhook admitted without saying why: %v", m.Warnings)
			}
			if !m.Allowed && (m.Result.Code != tt.wantCode || !strings.Contains(m.Result.Message, tt.wantMessage)) {
				t.Fatalf("mutating webhook refused with %+v", m.Result)
			}
		})
	}
}

// TestPanicBecomesAnErrorReview: a handler that panics answers the API
// server with an error review carrying the request's UID; the panic value
// stays in the log.
func TestPanicBecomesAnErrorReview(t *testing.T) {
	boom := ctrladmission.HandlerFunc(func(context.Context, ctrladmission.Request) ctrladmission.Response {
		panic("secret at 10.0.0.7:8443 in *policies.Engine")
	})
	var logged []string
	log := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	before := testutil.ToFloat64(requestsTotal.WithLabelValues(validating, "NodePool", "CREATE", verdictError, "false"))
	body := request{op: admissionv1.Create, object: nodePool("p", fullRef)}.body(t)
	code, got := post(t, newWebhook(boom, validating, log), body, "application/json")
	r := got.Response
	if code != http.StatusOK || r.Allowed || r.UID == "" || r.Result == nil || r.Result.Code != http.StatusInternalServerError {
		t.Fatalf("HTTP %d, response %+v", code, r)
	}
	if r.Result.Message != "karpgate hit an internal error judging NodePool/p; the details are in its log" {
		t.Fatalf("message %q", r.Result.Message)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "secret at 10.0.0.7:8443") || !strings.Contains(logged[0], "stack") {
		t.Fatalf("the panic was not logged with its stack: %v", logged)
	}
	if after := testutil.ToFloat64(requestsTotal.WithLabelValues(validating, "NodePool", "CREATE", verdictError, "false")); after != before+1 {
		t.Fatalf("error verdicts went %v -> %v", before, after)
	}
}

// TestMetricLabelsTakeOnlyKnownValues: kinds and operations a request names
// become labels only when karpgate knows them.
func TestMetricLabelsTakeOnlyKnownValues(t *testing.T) {
	engines := newEngine(t, "")
	review := func(kind, op string) []byte {
		return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"kind":"` + kind + `"},"operation":"` + op + `","object":{"apiVersion":"v1","kind":"` + kind + `"}}}`)
	}
	tests := []struct{ kind, op, wantKind, wantOp string }{
		{"NodePool", "DELETE", "NodePool", "DELETE"},
		{"Pod", "CREATE", "other", "CREATE"},
		{`x\\ny{}`, "EXPLODE", "other", "other"},
	}
	for _, tt := range tests {
		before := testutil.ToFloat64(requestsTotal.WithLabelValues(validating, tt.wantKind, tt.wantOp, verdictSkipped, "false"))
		post(t, NewValidatingWebhook(engines, logr.Discard()), review(tt.kind, tt.op), "application/json")
		if after := testutil.ToFloat64(requestsTotal.WithLabelValues(validating, tt.wantKind, tt.wantOp, verdictSkipped, "false")); after != before+1 {
			t.Errorf("kind %q operation %q: {kind=%q,operation=%q} went %v -> %v", tt.kind, tt.op, tt.wantKind, tt.wantOp, before, after)
		}
	}
	for _, values := range collectLabelValues(t, "karpgate_admission_requests_total", "kind", "operation") {
		if values != "other" && kindLabel(values) == otherLabel && operationLabel(policies.Operation(values)) == otherLabel {
			t.Errorf("label value %q came from a request", values)
		}
	}
}
