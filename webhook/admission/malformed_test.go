package admission

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

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
		{"wrong content type", "text/plain", review(`{"uid":"1","operation":"CREATE"}`), http.StatusBadRequest, "contentType=text/plain, expected application/json", false},
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
