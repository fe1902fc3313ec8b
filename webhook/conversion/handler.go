package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/jsonerror"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/serving"
)

// DefaultMaxRequestBytes bounds a review body. The API server sends whole
// lists in one review, so this is well above one object's etcd limit (1.5 MiB).
const DefaultMaxRequestBytes = 32 << 20

// MaxObjectBytes bounds one object of a review. Decoded, an object takes
// several times its JSON; etcd stores none above 1.5 MiB, so a larger one
// is not the API server's.
const MaxObjectBytes = 3 << 20

// MemoryFactor is what one byte of a review costs at peak while it is
// converted: the body, each object's raw copy, the converted objects (v1
// is larger than v1beta1) and one object decoded at a time
// (BenchmarkReviewMemory measures it).
const MemoryFactor = 6

// Review API versions the API server may send, depending on the CRD's
// conversionReviewVersions; both have the same JSON shape.
var reviewAPIVersions = map[string]bool{"apiextensions.k8s.io/v1": true, "apiextensions.k8s.io/v1beta1": true}

// convertFunc is conversion.Convert; a field so tests can prove the
// metadata check catches a converter that oversteps.
type convertFunc func(ctx context.Context, obj map[string]any, toVersion string, opts conversion.Options) (map[string]any, error)

// Handler answers ConversionReview requests.
type Handler struct {
	// NodePools fills NodeClaims' v1 expireAfter; nil gives them Never.
	// Each review looks each NodePool up at most once.
	NodePools conversion.NodePoolLookup
	// MaxRequestBytes bounds the body; 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// Log receives failed reviews; the zero value discards them.
	Log logr.Logger
	// NodePoolReviewed, when set, is called for each review that converts
	// NodePools: proof that the NodePool CRD converts through karpgate, so
	// NodePools read from now on carry karpgate's conversion
	// (NodePoolCache.Want).
	NodePoolReviewed func()
	// KnownCallersOnly serves NodePools (the lookups, and the
	// NodePoolReviewed proof) only to known callers (serving.CallerOf: a
	// trusted address or a verified client certificate), so that no
	// stranger learns from /convert whether a NodePool exists or what its
	// expireAfter is. Set it when the server knows the API server's
	// addresses: the API server presents no certificate to conversion
	// webhooks, so without them its reviews are strangers' too, and
	// NodeClaims could not convert. A stranger's review converts
	// NodePools and EC2NodeClasses as anyone's does; one with a NodeClaim
	// that needs its NodePool fails, saying why.
	KnownCallersOnly bool

	convert convertFunc
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "a ConversionReview must be POSTed")
		return
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: want application/json", r.Header.Get("Content-Type")))
		return
	}
	limit := h.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	body, err := serving.ReadBody(w, r, limit)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("ConversionReview larger than %d bytes", limit))
			return
		}
		// Net errors carry socket addresses: they stay in the log.
		h.Log.Info("reading a ConversionReview failed", "error", err.Error())
		httpError(w, http.StatusBadRequest, "the request body could not be read")
		return
	}
	review, err := h.decodeReview(body)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	req := review.Request
	review.Request = nil
	review.Response = h.review(r.Context(), req)
	failed := review.Response.Result.Status == metav1.StatusFailure
	countReview(req.DesiredAPIVersion, failed)
	if failed {
		h.Log.Info("conversion failed", "uid", req.UID, "desiredAPIVersion", req.DesiredAPIVersion, "objects", len(req.Objects), "message", review.Response.Result.Message)
	}
	req.Objects = nil // the converted objects replace them; let them go
	w.Header().Set("Content-Type", "application/json")
	if err := writeReview(w, review); err != nil {
		h.Log.Info("writing the ConversionReview response failed", "uid", req.UID, "error", err.Error())
	}
}

// writeReview writes the answer object by object: encoding it whole would
// hold a second copy of every converted object until the last byte left.
func writeReview(w io.Writer, review *apiextensionsv1.ConversionReview) error {
	resp := review.Response
	result, err := json.Marshal(resp.Result)
	if err != nil {
		return err
	}
	out := errWriter{w: w}
	out.write([]byte(`{"apiVersion":`), quote(review.APIVersion), []byte(`,"kind":`), quote(review.Kind),
		[]byte(`,"response":{"uid":`), quote(string(resp.UID)), []byte(`,"convertedObjects":[`))
	for i, obj := range resp.ConvertedObjects {
		if i > 0 {
			out.write([]byte{','})
		}
		out.write(obj.Raw)
	}
	out.write([]byte(`],"result":`), result, []byte("}}\n"))
	return out.err
}

// errWriter keeps the first write error and skips the writes after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(parts ...[]byte) {
	for _, p := range parts {
		if e.err == nil {
			_, e.err = e.w.Write(p)
		}
	}
}

func quote(s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

func (h *Handler) decodeReview(body []byte) (*apiextensionsv1.ConversionReview, error) {
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(body, review); err != nil {
		detail, ok := jsonerror.Describe(err)
		if !ok {
			h.Log.Info("undecodable ConversionReview", "error", err.Error())
			detail = "it does not decode (the details are in karpgate's log)"
		}
		return nil, fmt.Errorf("the body is not a ConversionReview: %s", detail)
	}
	if review.Kind != "ConversionReview" || !reviewAPIVersions[review.APIVersion] {
		return nil, fmt.Errorf("want a ConversionReview of apiextensions.k8s.io/v1 or v1beta1, got kind %q apiVersion %q", review.Kind, review.APIVersion)
	}
	if review.Request == nil {
		return nil, errors.New("the ConversionReview has no request")
	}
	return review, nil
}

// review converts every object or none: the API server needs them all.
func (h *Handler) review(ctx context.Context, req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID}
	converted, err := h.convertAll(ctx, req)
	if err != nil {
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
		return resp
	}
	resp.ConvertedObjects = converted
	resp.Result = metav1.Status{Status: metav1.StatusSuccess}
	return resp
}

func (h *Handler) convertAll(ctx context.Context, req *apiextensionsv1.ConversionRequest) (converted []runtime.RawExtension, err error) {
	defer func() {
		// The library is fuzzed not to panic; this keeps one bad object
		// from taking the server down should that ever be wrong. What the
		// panic says stays in the log.
		if p := recover(); p != nil {
			h.Log.Error(fmt.Errorf("panic: %v", p), "converting a review panicked", "uid", req.UID, "desiredAPIVersion", req.DesiredAPIVersion, "stack", string(debug.Stack()))
			converted, err = nil, fmt.Errorf("karpgate hit an internal error converting to %s; the details are in its log", req.DesiredAPIVersion)
		}
	}()
	desired, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil || desired.Version == "" {
		return nil, fmt.Errorf("desiredAPIVersion %q is not group/version", req.DesiredAPIVersion)
	}
	convert := h.convert
	if convert == nil {
		convert = conversion.Convert
	}
	lookups, known := h.NodePools, h.servesNodePools(ctx)
	if !known && lookups != nil {
		lookups = refusedLookups{}
	}
	opts := conversion.Options{NodePools: newMemo(lookups)}
	converted = make([]runtime.RawExtension, 0, len(req.Objects))
	var failures objectFailures
	if h.NodePoolReviewed != nil && known && len(req.Objects) > 0 && isNodePool(req.Objects[0].Raw) {
		h.NodePoolReviewed()
	}
	for i, raw := range req.Objects {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("converting %d objects to %s: the request timed out after %d of them: %w", len(req.Objects), req.DesiredAPIVersion, i, err)
		}
		out, err := h.convertOne(ctx, convert, raw.Raw, i, desired, req.DesiredAPIVersion, opts)
		if err != nil {
			failures.add(err)
			continue
		}
		converted = append(converted, runtime.RawExtension{Raw: out})
		req.Objects[i].Raw = nil // converted: the original can go
	}
	if err := failures.err(len(req.Objects), req.DesiredAPIVersion); err != nil {
		return nil, err
	}
	return converted, nil
}

// servesNodePools says whether this review's caller may have NodePools
// looked up (KnownCallersOnly).
func (h *Handler) servesNodePools(ctx context.Context) bool {
	if !h.KnownCallersOnly {
		return true
	}
	caller, ok := serving.CallerOf(ctx)
	return ok && caller.Known()
}

// refusedLookups answer no stranger, whether the NodePool exists or not.
type refusedLookups struct{}

func (refusedLookups) ExpireAfter(context.Context, string) (string, bool, error) {
	return "", false, &conversion.LookupRefused{
		Reason: "karpgate reads NodePools only for the API server, and this review came from an address outside --trusted-source-cidrs",
		Fix:    "if this is the API server, add its address to karpgate serve --trusted-source-cidrs",
	}
}

// convertOne converts the i-th object of a review to its encoding at
// desired.
func (*Handler) convertOne(ctx context.Context, convert convertFunc, raw []byte, i int, desired schema.GroupVersion, desiredAPIVersion string, opts conversion.Options) ([]byte, error) {
	if len(raw) > MaxObjectBytes {
		return nil, fmt.Errorf("objects[%d]: %d bytes, over the %d-byte limit for one object (etcd stores at most 1.5 MiB)", i, len(raw), MaxObjectBytes)
	}
	obj, err := conversion.DecodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("objects[%d]: %w", i, err)
	}
	if gv, err := schema.ParseGroupVersion(stringField(obj, "apiVersion")); err != nil || gv.Group != desired.Group {
		return nil, fmt.Errorf("objects[%d]: apiVersion %q cannot convert to %s", i, stringField(obj, "apiVersion"), desiredAPIVersion)
	}
	out, err := convert(ctx, obj, desired.Version, opts)
	if err != nil {
		return nil, err
	}
	if err := conversion.CheckMetadata(obj, out); err != nil {
		return nil, fmt.Errorf("objects[%d]: refusing the conversion: %w", i, err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("objects[%d]: encoding: %w", i, err)
	}
	return data, nil
}

// isNodePool tells a NodePool's JSON without decoding it whole: the API
// server sends objects of one CRD per review, so one look at the first
// object says what the review converts.
func isNodePool(raw []byte) bool {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if len(raw) > MaxObjectBytes || json.Unmarshal(raw, &head) != nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	return err == nil && gv.Group == karpenter.CoreGroup && head.Kind == karpenter.KindNodePool
}

func stringField(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, strings.TrimSpace(msg)+"\n")
}
