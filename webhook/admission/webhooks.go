package admission

import (
	"net/http"

	"github.com/go-logr/logr"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// NewValidatingWebhook is the http.Handler for the validating endpoint.
func NewValidatingWebhook(engines Engines, log logr.Logger) http.Handler {
	return ValidatingWebhook(&Validator{Engines: engines, Log: log})
}

// ValidatingWebhook is the http.Handler for the validating endpoint
// answered by v (karpgate serve sets its Twins).
func ValidatingWebhook(v *Validator) http.Handler {
	return newWebhook(v, validating, v.Log)
}

// NewMutatingWebhook is the http.Handler for the mutating endpoint.
func NewMutatingWebhook(engines Engines, log logr.Logger) http.Handler {
	return newWebhook(&Mutator{Engines: engines, Log: log}, mutating, log)
}

// newWebhook decodes the AdmissionReview (v1 and v1beta1), answers
// malformed bodies with an error review, recovers panics, and encodes the
// response; see reviewServer.
func newWebhook(h ctrladmission.Handler, webhook string, log logr.Logger) http.Handler {
	return reviewServer{handler: h, webhook: webhook, log: log}
}

// MemoryFactor is what one byte of an admission review costs at peak while
// it is judged: the body, the objects' raw copies, the objects decoded,
// and the same again as the policy engine's input
// (BenchmarkReviewMemory measures it).
const MemoryFactor = 10

// MemoryPerValue is what each JSON value of a review (array element or
// object member) costs at peak on top of MemoryFactor's share of its
// bytes: decoded, each is an interface or a map entry, and again a term
// of the policy engine's input, whatever its size in the body. A review
// of a million one-digit array elements would otherwise be charged a
// third of what it takes (BenchmarkReviewMemory's "wide" case).
const MemoryPerValue = 64
