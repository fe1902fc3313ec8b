package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"runtime/debug"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/internal/jsonerror"
	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/policies"
)

// reviewServer serves one admission Handler over HTTP: it decodes the
// AdmissionReview (admission.k8s.io/v1, or v1beta1, which has the same
// shape), runs the handler, and answers with a review of the version it
// was sent. It replaces controller-runtime's adapter, whose error responses
// carry Go type names and panic values: here a malformed body is described
// in JSON terms, and a panic is logged with its stack and answered with an
// error that points at the log.
type reviewServer struct {
	handler ctrladmission.Handler
	webhook string // "validate" or "mutate", for logs and metrics
	log     logr.Logger
}

var errEmptyBody = errors.New("empty body")

func (s reviewServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apiVersion := admissionv1.SchemeGroupVersion.String()
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		s.write(w, apiVersion, ctrladmission.Errored(http.StatusBadRequest, fmt.Errorf("Content-Type %q: karpgate reads AdmissionReviews as application/json", r.Header.Get("Content-Type"))))
		return
	}
	in, err := decodeReview(w, r)
	if err != nil {
		countRequest(s.webhook, review{}, verdictError)
		s.write(w, apiVersion, ctrladmission.Errored(http.StatusBadRequest, describeDecodeError(err, s.log)))
		return
	}
	if in.APIVersion == admissionv1beta1.SchemeGroupVersion.String() {
		apiVersion = in.APIVersion
	}
	if in.Request == nil {
		countRequest(s.webhook, review{}, verdictError)
		s.write(w, apiVersion, ctrladmission.Errored(http.StatusBadRequest, errNoRequest))
		return
	}
	req := ctrladmission.Request{AdmissionRequest: *in.Request}
	resp := s.handle(r.Context(), req)
	if err := resp.Complete(req); err != nil {
		s.log.Error(err, "encoding the admission response", "uid", req.UID)
		resp = ctrladmission.Errored(http.StatusInternalServerError, errors.New("karpgate could not encode its answer; the details are in its log"))
		resp.UID = req.UID
	}
	s.write(w, apiVersion, resp)
}

// handle runs the handler; a panic becomes an error response with the UID
// the API server matches answers by.
func (s reviewServer) handle(ctx context.Context, req ctrladmission.Request) (resp ctrladmission.Response) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(fmt.Errorf("panic: %v", p), "the admission handler panicked; answering with an error",
				"uid", req.UID, "kind", req.Kind.Kind, "name", req.Name, "operation", req.Operation, "stack", string(debug.Stack()))
			countRequest(s.webhook, review{kind: req.Kind.Kind, operation: policies.Operation(req.Operation)}, verdictError)
			resp = ctrladmission.Errored(http.StatusInternalServerError, fmt.Errorf("karpgate hit an internal error judging %s/%s; the details are in its log", req.Kind.Kind, req.Name))
			resp.UID = req.UID
		}
	}()
	return s.handler.Handle(ctx, req)
}

func (s reviewServer) write(w http.ResponseWriter, apiVersion string, resp ctrladmission.Response) {
	out := admissionv1.AdmissionReview{Response: &resp.AdmissionResponse}
	out.APIVersion, out.Kind = apiVersion, "AdmissionReview"
	body, err := json.Marshal(out)
	if err != nil {
		s.log.Error(err, "encoding the AdmissionReview")
		http.Error(w, "karpgate could not encode its answer; the details are in its log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// maxReviewBytes bounds a body read outside karpgate's webhook server,
// which enforces --max-request-bytes before the handler runs.
const maxReviewBytes = 32 << 20

func decodeReview(w http.ResponseWriter, r *http.Request) (*admissionv1.AdmissionReview, error) {
	raw, err := serving.ReadBody(w, r, maxReviewBytes)
	if err != nil {
		return &admissionv1.AdmissionReview{}, err
	}
	if len(raw) == 0 {
		return &admissionv1.AdmissionReview{}, errEmptyBody
	}
	review := &admissionv1.AdmissionReview{}
	return review, json.Unmarshal(raw, review)
}

// describeDecodeError says what is wrong with a body in JSON terms; an
// error it cannot phrase that way is logged and summarised.
func describeDecodeError(err error, log logr.Logger) error {
	if errors.Is(err, errEmptyBody) {
		return errNoRequest
	}
	detail, ok := jsonerror.Describe(err)
	if !ok {
		log.Info("undecodable AdmissionReview", "error", err.Error())
		detail = "it does not decode (the details are in karpgate's log)"
	}
	return fmt.Errorf("the body is not an AdmissionReview with a request: %s; karpgate answers admission.k8s.io/v1 AdmissionReviews from the API server", detail)
}
