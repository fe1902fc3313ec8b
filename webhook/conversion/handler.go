package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/conversion"
)

// DefaultMaxRequestBytes bounds a review body. The API server sends whole
// lists in one review, so this is well above one object's etcd limit (1.5 MiB).
const DefaultMaxRequestBytes = 32 << 20

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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("ConversionReview larger than %d bytes", limit))
			return
		}
		httpError(w, http.StatusBadRequest, "reading the request: "+err.Error())
		return
	}
	review, err := decodeReview(body)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	req := review.Request
	review.Request = nil
	review.Response = h.review(r.Context(), req)
	if review.Response.Result.Status == metav1.StatusFailure {
		h.Log.Info("conversion failed", "uid", req.UID, "desiredAPIVersion", req.DesiredAPIVersion, "objects", len(req.Objects), "message", review.Response.Result.Message)
	}
	out, err := json.Marshal(review)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "encoding the response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func decodeReview(body []byte) (*apiextensionsv1.ConversionReview, error) {
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(body, review); err != nil {
		return nil, fmt.Errorf("the body is not a ConversionReview: %w", err)
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
		// from taking the server down should that ever be wrong.
		if p := recover(); p != nil {
			converted, err = nil, fmt.Errorf("internal error converting to %s: %v", req.DesiredAPIVersion, p)
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
	opts := conversion.Options{NodePools: newMemo(h.NodePools)}
	converted = make([]runtime.RawExtension, 0, len(req.Objects))
	for i, raw := range req.Objects {
		obj, err := conversion.DecodeObject(raw.Raw)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		if gv, err := schema.ParseGroupVersion(stringField(obj, "apiVersion")); err != nil || gv.Group != desired.Group {
			return nil, fmt.Errorf("objects[%d]: apiVersion %q cannot convert to %s", i, stringField(obj, "apiVersion"), req.DesiredAPIVersion)
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
		converted = append(converted, runtime.RawExtension{Raw: data})
	}
	return converted, nil
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
