package admission

import (
	"net/http"

	"github.com/go-logr/logr"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// NewValidatingWebhook is the http.Handler for the validating endpoint.
func NewValidatingWebhook(engines Engines, log logr.Logger) http.Handler {
	return newWebhook(&Validator{Engines: engines, Log: log}, log)
}

// NewMutatingWebhook is the http.Handler for the mutating endpoint.
func NewMutatingWebhook(engines Engines, log logr.Logger) http.Handler {
	return newWebhook(&Mutator{Engines: engines, Log: log}, log)
}

// newWebhook lets controller-runtime decode the AdmissionReview (v1 and
// v1beta1), answer malformed bodies with an error review, recover panics,
// and encode the response.
func newWebhook(h ctrladmission.Handler, log logr.Logger) http.Handler {
	hook := (&ctrladmission.Webhook{Handler: h}).WithRecoverPanic(true)
	handler, _ := ctrladmission.StandaloneWebhook(hook, ctrladmission.StandaloneOptions{Logger: log})
	return handler
}
