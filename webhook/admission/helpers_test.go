package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

func newEngine(t testing.TB, karpgateYAML string, policyDirs ...string) Engines {
	t.Helper()
	cfg, err := config.Parse("karpgate.yaml", []byte(karpgateYAML))
	if err != nil {
		t.Fatal(err)
	}
	e, err := policies.New(context.Background(), policies.Options{
		Config: cfg, PolicyDirs: policyDirs,
		Now: func() time.Time { return time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return Static(e)
}

// request describes one AdmissionReview.
type request struct {
	op     admissionv1.Operation
	object map[string]any
	old    map[string]any
	dryRun bool
	user   string
	groups []string
}

func (r request) body(t testing.TB) []byte {
	t.Helper()
	typed := r.object
	if typed == nil {
		typed = r.old
	}
	kind, _ := typed["kind"].(string)
	apiVersion, _ := typed["apiVersion"].(string)
	gv, _ := schema.ParseGroupVersion(apiVersion)
	req := &admissionv1.AdmissionRequest{
		UID:       types.UID("b6c1e3a0-0d6a-4c5e-9a57-4a2bd1f6a001"),
		Kind:      metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind},
		Name:      name(r.object, r.old),
		Operation: r.op,
		DryRun:    &r.dryRun,
		UserInfo:  authenticationv1.UserInfo{Username: r.user, Groups: r.groups},
	}
	if r.object != nil {
		req.Object = runtime.RawExtension{Raw: mustJSON(t, r.object)}
	}
	if r.old != nil {
		req.OldObject = runtime.RawExtension{Raw: mustJSON(t, r.old)}
	}
	review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}
	return mustJSON(t, review)
}

func name(objs ...map[string]any) string {
	for _, o := range objs {
		if n := objectName(o); n != "" {
			return n
		}
	}
	return ""
}

// post sends a body to a webhook handler and decodes its answer.
func post(t testing.TB, h http.Handler, body []byte, contentType string) (int, *admissionv1.AdmissionReview) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), review); err != nil || review.Response == nil {
		t.Fatalf("the answer is not an AdmissionReview with a response: %v\n%s", err, rec.Body.String())
	}
	return rec.Code, review
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// patch returns a deep copy of obj with the JSON patch applied.
func patch(t testing.TB, obj map[string]any, ops string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(applyAsAPIServer(t, mustJSON(t, obj), []byte(ops)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// applyAsAPIServer applies a JSON patch to an encoded object with the
// library, and the call, the API server uses on a mutating webhook's answer.
func applyAsAPIServer(t testing.TB, obj, ops []byte) []byte {
	t.Helper()
	p, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func nodeClass(name string, labels map[string]any, alias string) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1",
		"kind":       "EC2NodeClass",
		"metadata":   map[string]any{"name": name, "labels": labels},
		"spec": map[string]any{
			"role":                       "KarpenterNodeRole",
			"amiSelectorTerms":           []any{map[string]any{"alias": alias}},
			"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "c"}}},
			"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "c"}}},
		},
	}
}

var production = map[string]any{"karpgate.io/environment": "production"}

func nodePool(name string, ref map[string]any, budgets ...map[string]any) map[string]any {
	list := []any{}
	for _, b := range budgets {
		list = append(list, b)
	}
	if len(list) == 0 {
		list = append(list, map[string]any{"nodes": "10%"})
	}
	return map[string]any{
		"apiVersion": "karpenter.sh/v1",
		"kind":       "NodePool",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": "a"}},
				"spec": map[string]any{
					"nodeClassRef": ref,
					"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}}},
				},
			},
			"disruption": map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m", "budgets": list},
		},
	}
}

var fullRef = map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}

var weekendFreeze = map[string]any{"nodes": "0", "schedule": "0 9 * * sat-sun", "duration": "24h"}
