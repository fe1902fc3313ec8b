package conversion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/serving"
)

const (
	nodePoolA  = `{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","metadata":{"name":"a","uid":"1","resourceVersion":"7"},"spec":{"disruption":{"consolidationPolicy":"WhenUnderutilized","expireAfter":"720h"},"template":{"spec":{"nodeClassRef":{"name":"default"},"kubelet":{"maxPods":110},"requirements":[]}}}}`
	nodePoolB  = `{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","metadata":{"name":"b"},"spec":{"disruption":{"consolidationPolicy":"WhenEmpty","consolidateAfter":"30s"},"template":{"spec":{"nodeClassRef":{"name":"default","kind":"EC2NodeClass"},"requirements":[]}}}}`
	nodePoolV1 = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"c"},"spec":{"disruption":{"consolidateAfter":"0s","budgets":[{"nodes":"1","reasons":["Drifted"]}]},"template":{"spec":{"expireAfter":"720h","nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]}}}}`
	claim      = `{"apiVersion":"karpenter.sh/v1beta1","kind":"NodeClaim","metadata":{"name":"%s","labels":{"karpenter.sh/nodepool":"gpu"}},"spec":{"nodeClassRef":{"name":"default"},"requirements":[]}}`
)

func reviewBody(apiVersion, desired string, objects ...string) string {
	return `{"apiVersion":"` + apiVersion + `","kind":"ConversionReview","request":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","desiredAPIVersion":"` + desired + `","objects":[` + strings.Join(objects, ",") + `]}}`
}

func post(t *testing.T, h http.Handler, body string) (*httptest.ResponseRecorder, *apiextensionsv1.ConversionReview) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/convert", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return rec, nil
	}
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), review); err != nil {
		t.Fatalf("response is not a ConversionReview: %v\n%s", err, rec.Body)
	}
	return rec, review
}

// countingNodePools answers from a map and counts the questions.
type countingNodePools struct {
	values map[string]string
	calls  atomic.Int32
	err    error
}

func (c *countingNodePools) ExpireAfter(_ context.Context, name string) (string, bool, error) {
	c.calls.Add(1)
	if c.err != nil {
		return "", false, c.err
	}
	v, ok := c.values[name]
	return v, ok, nil
}

func TestReviewConvertsEveryObjectInOrder(t *testing.T) {
	for _, reviewVersion := range []string{"apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"} {
		t.Run(reviewVersion, func(t *testing.T) {
			rec, review := post(t, &Handler{}, reviewBody(reviewVersion, "karpenter.sh/v1", nodePoolA, nodePoolB, nodePoolV1))
			if review == nil {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if review.APIVersion != reviewVersion || review.Kind != "ConversionReview" || review.Request != nil {
				t.Fatalf("response envelope %s %s, request %v", review.APIVersion, review.Kind, review.Request)
			}
			resp := review.Response
			if resp.UID != "705ab4f5-6393-11e8-b7cc-42010a800002" || resp.Result.Status != metav1.StatusSuccess {
				t.Fatalf("uid %q result %+v", resp.UID, resp.Result)
			}
			if len(resp.ConvertedObjects) != 3 {
				t.Fatalf("want 3 objects, got %d", len(resp.ConvertedObjects))
			}
			for i, in := range []string{nodePoolA, nodePoolB, nodePoolV1} {
				obj, _ := conversion.DecodeObject([]byte(in))
				want, err := conversion.Convert(context.Background(), obj, "v1", conversion.Options{})
				if err != nil {
					t.Fatal(err)
				}
				got, err := conversion.DecodeObject(resp.ConvertedObjects[i].Raw)
				if err != nil {
					t.Fatal(err)
				}
				wantJSON, _ := json.Marshal(want)
				gotJSON, _ := json.Marshal(got)
				if string(wantJSON) != string(gotJSON) {
					t.Errorf("object %d:\ngot  %s\nwant %s", i, gotJSON, wantJSON)
				}
			}
		})
	}
}

func TestReviewLooksEachNodePoolUpOnce(t *testing.T) {
	pools := &countingNodePools{values: map[string]string{"gpu": "24h"}}
	objects := []string{}
	for _, name := range []string{"gpu-1", "gpu-2", "gpu-3"} {
		objects = append(objects, strings.Replace(claim, "%s", name, 1))
	}
	_, review := post(t, &Handler{NodePools: pools}, reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", objects...))
	if review == nil || review.Response.Result.Status != metav1.StatusSuccess {
		t.Fatalf("review failed: %+v", review)
	}
	for i, raw := range review.Response.ConvertedObjects {
		obj, _ := conversion.DecodeObject(raw.Raw)
		if got := obj["spec"].(map[string]any)["expireAfter"]; got != "24h" {
			t.Errorf("object %d expireAfter %v, want the NodePool's 24h", i, got)
		}
	}
	if n := pools.calls.Load(); n != 1 {
		t.Errorf("NodePool gpu looked up %d times in one review, want 1", n)
	}
}

// panics is a converter with a bug; what it says must not reach the client.
func panics(context.Context, map[string]any, string, conversion.Options) (map[string]any, error) {
	panic("secret at 10.0.0.7:8443 in a nil map")
}

func TestReviewFailures(t *testing.T) {
	oversteps := func(ctx context.Context, obj map[string]any, to string, opts conversion.Options) (map[string]any, error) {
		out, err := conversion.Convert(ctx, obj, to, opts)
		if err == nil {
			out["metadata"].(map[string]any)["resourceVersion"] = "8"
		}
		return out, err
	}
	tests := []struct {
		name    string
		handler *Handler
		body    string
		want    string
	}{
		{"one malformed object fails the review", &Handler{},
			reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", nodePoolB, `{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","metadata":{"name":"bad"},"spec":{"disruption":{"budgets":"10%"}}}`),
			"NodePool/bad: spec.disruption.budgets: want a list, got a string"},
		{"an object that is not JSON", &Handler{}, reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", nodePoolB, `"text"`),
			"objects[1]: want a JSON object, got a string"},
		{"a desired version without a group", &Handler{}, reviewBody("apiextensions.k8s.io/v1", "v1", nodePoolB),
			`objects[0]: apiVersion "karpenter.sh/v1beta1" cannot convert to v1`},
		{"a desired version that is not group/version", &Handler{}, reviewBody("apiextensions.k8s.io/v1", "a/b/c", nodePoolB),
			`desiredAPIVersion "a/b/c" is not group/version`},
		{"a desired version Karpenter does not have", &Handler{}, reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v2", nodePoolB),
			`NodePool/b: cannot convert to version "v2"`},
		{"a NodePool lookup failure", &Handler{NodePools: &countingNodePools{err: errors.New("etcd timeout")}},
			reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", strings.Replace(claim, "%s", "gpu-1", 1)),
			`NodeClaim/gpu-1: spec.expireAfter: reading expireAfter of NodePool "gpu": etcd timeout`},
		{"a converter that changes metadata beyond labels and annotations", &Handler{convert: oversteps},
			reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", nodePoolA),
			"objects[0]: refusing the conversion: metadata.resourceVersion: changed by the conversion"},
		{"a converter that panics", &Handler{convert: panics},
			reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", nodePoolA),
			"karpgate hit an internal error converting to karpenter.sh/v1; the details are in its log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, review := post(t, tt.handler, tt.body)
			if review == nil {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			resp := review.Response
			if resp.Result.Status != metav1.StatusFailure || !strings.Contains(resp.Result.Message, tt.want) {
				t.Fatalf("result %+v, want Failure containing %q", resp.Result, tt.want)
			}
			if len(resp.ConvertedObjects) != 0 || resp.UID == "" {
				t.Fatalf("a failed review must carry the uid and no objects: %+v", resp)
			}
			if strings.Contains(resp.Result.Message, "secret") || strings.Contains(resp.Result.Message, "10.0.0.7") {
				t.Fatalf("the panic reached the client: %s", resp.Result.Message)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	tests := []struct {
		name, method, contentType, body string
		limit                           int64
		code                            int
		want                            string
	}{
		{"GET", http.MethodGet, "application/json", "", 0, http.StatusMethodNotAllowed, "must be POSTed"},
		{"YAML", http.MethodPost, "application/yaml", "{}", 0, http.StatusUnsupportedMediaType, `Content-Type "application/yaml"`},
		{"not JSON", http.MethodPost, "application/json", "{", 0, http.StatusBadRequest, "the body is not a ConversionReview: the JSON ends early"},
		{"request is a list", http.MethodPost, "application/json", `{"request":[]}`, 0, http.StatusBadRequest, "the body is not a ConversionReview: request is a JSON array where an object belongs"},
		{"another kind", http.MethodPost, "application/json; charset=utf-8", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}`, 0, http.StatusBadRequest, `got kind "AdmissionReview"`},
		{"no request", http.MethodPost, "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`, 0, http.StatusBadRequest, "has no request"},
		{"too large", http.MethodPost, "application/json", reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", nodePoolA), 100, http.StatusRequestEntityTooLarge, "larger than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/convert", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.contentType)
			rec := httptest.NewRecorder()
			(&Handler{MaxRequestBytes: tt.limit}).ServeHTTP(rec, req)
			if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.want) {
				t.Fatalf("got %d %q, want %d containing %q", rec.Code, rec.Body, tt.code, tt.want)
			}
			if strings.Contains(rec.Body.String(), "Go ") || strings.Contains(rec.Body.String(), "v1.Conversion") {
				t.Fatalf("the answer names Go types: %s", rec.Body)
			}
		})
	}
}

// FuzzServeConversionReview: any body gets an answer and never a panic.
func FuzzServeConversionReview(f *testing.F) {
	f.Add([]byte(reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", nodePoolA, nodePoolB)))
	f.Add([]byte(reviewBody("apiextensions.k8s.io/v1beta1", "karpenter.sh/v1beta1", nodePoolV1)))
	f.Add([]byte(reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", `null`, `[]`, `{"apiVersion":7}`)))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"objects":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/convert", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		(&Handler{NodePools: &countingNodePools{values: map[string]string{"gpu": "1h"}}}).ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			review := &apiextensionsv1.ConversionReview{}
			if err := json.Unmarshal(rec.Body.Bytes(), review); err != nil || review.Response == nil {
				t.Fatalf("200 without a ConversionReview response: %v %s", err, rec.Body)
			}
		case http.StatusBadRequest:
		default:
			t.Fatalf("unexpected status %d: %s", rec.Code, rec.Body)
		}
	})
}

// TestReviewNamesEveryObjectThatFailed: the API server takes all objects
// or none, so one bad object still fails the review, but the answer names
// each that failed, not only the first.
func TestReviewNamesEveryObjectThatFailed(t *testing.T) {
	bad := func(name string) string {
		return `{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","metadata":{"name":"` + name + `"},"spec":{"disruption":{"budgets":"10%"}}}`
	}
	objects := []string{nodePoolB, bad("x"), nodePoolA, bad("y")}
	for i := range 12 {
		objects = append(objects, bad(fmt.Sprintf("z%d", i)))
	}
	_, review := post(t, &Handler{}, reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", objects...))
	msg := review.Response.Result.Message
	for _, want := range []string{"14 of 16 objects could not be converted to karpenter.sh/v1: ", "NodePool/x: spec.disruption.budgets", "; NodePool/y: spec.disruption.budgets", "; and 4 more"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q, want it to contain %q", msg, want)
		}
	}
}

// TestReviewStopsWhenItsContextEnds: a review whose request timed out
// stops between two objects instead of converting the rest for nobody.
func TestReviewStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	converted := 0
	h := &Handler{convert: func(c context.Context, obj map[string]any, to string, opts conversion.Options) (map[string]any, error) {
		converted++
		if converted == 2 {
			cancel() // the request's deadline passes during the second object
		}
		return conversion.Convert(c, obj, to, opts)
	}}
	req := &apiextensionsv1.ConversionRequest{UID: "1", DesiredAPIVersion: "karpenter.sh/v1"}
	for range 5 {
		req.Objects = append(req.Objects, runtime.RawExtension{Raw: []byte(nodePoolB)})
	}
	resp := h.review(ctx, req)
	if resp.Result.Status != metav1.StatusFailure || !strings.Contains(resp.Result.Message, "the request timed out after 2 of them") || converted != 2 {
		t.Fatalf("result %+v after %d conversions, want a failure after 2", resp.Result, converted)
	}
}

// TestNodePoolReviewsAreReported: a review that converts NodePools proves
// the NodePool CRD converts through karpgate, which starts the NodePool
// cache (NodePoolCache.Want); NodeClaim reviews do not.
func TestNodePoolReviewsAreReported(t *testing.T) {
	tests := []struct {
		name    string
		objects []string
		want    int32
	}{
		{"nodepools", []string{nodePoolA, nodePoolB}, 1},
		{"a v1 nodepool to v1beta1", []string{nodePoolV1}, 1},
		{"nodeclaims", []string{strings.Replace(claim, "%s", "gpu-1", 1)}, 0},
		{"not json", []string{`"x"`}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reported atomic.Int32
			h := &Handler{NodePools: &countingNodePools{values: map[string]string{"gpu": "24h"}}, NodePoolReviewed: func() { reported.Add(1) }}
			desired := "karpenter.sh/v1"
			if tt.name == "a v1 nodepool to v1beta1" {
				desired = "karpenter.sh/v1beta1"
			}
			post(t, h, reviewBody("apiextensions.k8s.io/v1", desired, tt.objects...))
			if got := reported.Load(); got != tt.want {
				t.Errorf("NodePoolReviewed called %d times, want %d", got, tt.want)
			}
		})
	}
}

// TestNodePoolsAreLookedUpOnlyForKnownCallers: with KnownCallersOnly (the
// server knows the API server's addresses), a stranger's review never
// reaches the NodePools, so whether one exists and its expireAfter stay
// unknown to it: its NodeClaims fail alike for a NodePool that exists and
// one that does not, and its NodePool reviews do not start the NodePool
// cache. The API server's reviews convert as before.
func TestNodePoolsAreLookedUpOnlyForKnownCallers(t *testing.T) {
	trusted := serving.Caller{Source: netip.MustParseAddr("10.0.16.7"), TrustedSource: true}
	verified := serving.Caller{Source: netip.MustParseAddr("10.0.99.1"), Verified: true}
	stranger := serving.Caller{Source: netip.MustParseAddr("10.0.99.1")}
	const refusal = `spec.expireAfter: cannot read expireAfter of NodePool %q: karpgate reads NodePools only for the API server, and this review came from an address outside --trusted-source-cidrs; if this is the API server, add its address to karpgate serve --trusted-source-cidrs`
	for _, tt := range []struct {
		name             string
		knownCallersOnly bool
		caller           *serving.Caller // nil: none recorded
		nodePool         string          // the NodeClaim's
		// want is the NodeClaim's expireAfter, or the review's failure.
		wantExpireAfter, wantFailure string
		wantLookups                  int32
		wantReported                 int32
	}{
		{"the default: every caller, as the API server's reviews are strangers'", false, &stranger, "gpu", "24h", "", 1, 1},
		{"the default, with no caller recorded", false, nil, "gpu", "24h", "", 1, 1},
		{"known callers only: a trusted address", true, &trusted, "gpu", "24h", "", 1, 1},
		{"known callers only: a verified certificate", true, &verified, "gpu", "24h", "", 1, 1},
		{"known callers only: a missing NodePool is Never for the API server", true, &trusted, "other", "Never", "", 1, 1},
		{"known callers only: a stranger learns nothing of a NodePool that exists", true, &stranger, "gpu", "", fmt.Sprintf(refusal, "gpu"), 0, 0},
		{"known callers only: nor of one that does not", true, &stranger, "other", "", fmt.Sprintf(refusal, "other"), 0, 0},
		{"known callers only: no caller recorded is a stranger", true, nil, "gpu", "", fmt.Sprintf(refusal, "gpu"), 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pools := &countingNodePools{values: map[string]string{"gpu": "24h"}}
			var reported atomic.Int32
			h := &Handler{NodePools: pools, KnownCallersOnly: tt.knownCallersOnly, NodePoolReviewed: func() { reported.Add(1) }}
			ctx := context.Background()
			if tt.caller != nil {
				ctx = serving.WithCaller(ctx, *tt.caller)
			}
			claimOf := strings.Replace(strings.Replace(claim, "%s", "c-1", 1), `"gpu"`, `"`+tt.nodePool+`"`, 1)
			_, claims := postWithContext(ctx, t, h, reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", claimOf))
			resp := claims.Response
			if tt.wantFailure != "" {
				if resp.Result.Status != metav1.StatusFailure || !strings.HasSuffix(resp.Result.Message, tt.wantFailure) {
					t.Fatalf("result %+v, want a failure ending %q", resp.Result, tt.wantFailure)
				}
			} else {
				if resp.Result.Status != metav1.StatusSuccess {
					t.Fatalf("result %+v", resp.Result)
				}
				obj, _ := conversion.DecodeObject(resp.ConvertedObjects[0].Raw)
				if got := obj["spec"].(map[string]any)["expireAfter"]; got != tt.wantExpireAfter {
					t.Errorf("expireAfter %v, want %s", got, tt.wantExpireAfter)
				}
			}
			if got := pools.calls.Load(); got != tt.wantLookups {
				t.Errorf("%d NodePool lookups, want %d", got, tt.wantLookups)
			}
			// Whoever asks, NodePools themselves convert.
			_, pools2 := postWithContext(ctx, t, h, reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", nodePoolA))
			if pools2.Response.Result.Status != metav1.StatusSuccess {
				t.Fatalf("a NodePool review: %+v", pools2.Response.Result)
			}
			if got := reported.Load(); got != tt.wantReported {
				t.Errorf("NodePoolReviewed called %d times, want %d", got, tt.wantReported)
			}
		})
	}
}

// postWithContext posts with ctx as the request's context, as the webhook
// server hands it to the handler (with the caller in it).
func postWithContext(ctx context.Context, t *testing.T, h http.Handler, body string) (*httptest.ResponseRecorder, *apiextensionsv1.ConversionReview) {
	t.Helper()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/convert", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	review := &apiextensionsv1.ConversionReview{}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), review) != nil || review.Response == nil {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	return rec, review
}
