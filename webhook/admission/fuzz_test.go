package admission

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/conversion"
)

// checkAnswer fails unless body is an AdmissionReview response that either
// admits or says why not.
func checkAnswer(t *testing.T, h http.Handler, body []byte) *admissionv1.AdmissionResponse {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("no AdmissionReview response (%v): %s", err, rec.Body.String())
	}
	if r := review.Response; !r.Allowed && (r.Result == nil || r.Result.Message == "") {
		t.Fatalf("refused without a reason: %+v", r)
	}
	// A recovered panic is still a bug: the answer says so.
	if r := review.Response; r.Result != nil && strings.Contains(r.Result.Message, "internal error") {
		t.Fatalf("the handler panicked: %s", r.Result.Message)
	}
	return review.Response
}

func fuzzHandlers(f *testing.F, karpgateYAML string) []http.Handler {
	engines := newEngine(f, karpgateYAML)
	return []http.Handler{
		NewValidatingWebhook(engines, logr.Discard()),
		NewMutatingWebhook(engines, logr.Discard()),
	}
}

// FuzzAdmissionReview feeds arbitrary bodies to both webhooks.
func FuzzAdmissionReview(f *testing.F) {
	for _, r := range []request{
		{op: admissionv1.Create, object: nodeClass("p", production, "al2023@latest")},
		{op: admissionv1.Update, object: nodePool("p", map[string]any{"name": "x"}, weekendFreeze), old: nodePool("p", fullRef)},
		{op: admissionv1.Create, object: nodeClass("d", nil, "al2023@latest"), dryRun: true},
	} {
		f.Add(r.body(f))
	}
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"CREATE","object":{"apiVersion":"karpenter.sh/v1","kind":"NodePool","spec":7}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"1","operation":"UPDATE","object":{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass"},"oldObject":null}}`))
	f.Add([]byte(`kind: AdmissionReview`))
	f.Add([]byte{})
	handlers := fuzzHandlers(f, pinning)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, h := range handlers {
			checkAnswer(t, h, body)
		}
	})
}

// FuzzObjects keeps the review well formed and fuzzes the objects in it,
// so that the engine, the mutations and, for v1beta1 objects, the
// conversion to the stored form and the weighing of restore records see
// arbitrary Karpenter objects.
func FuzzObjects(f *testing.F) {
	seeds := [][2]map[string]any{
		{nodeClass("p", production, "al2023@latest"), nodeClass("p", production, "al2023@v20240807")},
		{nodePool("p", map[string]any{"name": "x"}, weekendFreeze), nodePool("p", fullRef)},
		{nodePool("p", fullRef, map[string]any{"nodes": "0", "reasons": []any{"Drifted"}}), nil},
	}
	for _, s := range seeds {
		f.Add(mustJSON(f, s[0]), mustJSON(f, s[1]), s[1] != nil)
	}
	f.Add([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","spec":{"template":{"spec":{"nodeClassRef":[]}},"disruption":{"budgets":"x"}}}`), []byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","spec":{"template":7}}`), true)
	f.Add([]byte(`{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"labels":{"karpgate.io/environment":"prod"}},"spec":{"amiSelectorTerms":[{"alias":"@latest"},{"alias":7}]}}`), []byte(`null`), false)
	// Held NodePools and waivers: what the mutating webhook keeps.
	frozen := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p","annotations":{"karpgate.io/rollout-guard":"{\"budget\":{\"nodes\":\"0\"},\"index\":0,\"since\":\"2026-01-05T08:00:00Z\",\"by\":\"freeze\"}"}},"spec":{"disruption":{"budgets":[{"nodes":"0"}]}}}`
	f.Add([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"disruption":{"budgets":"x"}}}`), []byte(frozen), true)
	f.Add([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p","annotations":null},"spec":{"disruption":null}}`), []byte(frozen), true)
	f.Add([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p","annotations":{"karpgate.io/waive-KG1":{"a":1},"karpgate.io/waivers-set-by":"[]"}}}`), []byte(`{"metadata":{"annotations":{"karpgate.io/waive-KG1":{"a":1}}}}`), true)
	// v1beta1 writes, judged as stored too: honest and forged restore
	// records, and records the conversion refuses.
	pinned := nodeClass("p", production, "al2023@v20240807")
	pinned["spec"].(map[string]any)["kubelet"] = map[string]any{"maxPods": int64(110)}
	view := asV1Beta1(f, pinned)
	f.Add(mustJSON(f, view), mustJSON(f, view), true)
	f.Add(mustJSON(f, withRecord(f, view, []any{"spec", "amiSelectorTerms"}, `[{"alias":"al2023@v20240807"}]`, `[{"alias":"al2023@latest"}]`)), mustJSON(f, view), true)
	f.Add(mustJSON(f, withRecord(f, view, []any{"metadata", "annotations", "karpgate.io/waive-KG101"}, "", `"x"`)), []byte(`null`), false)
	f.Add(mustJSON(f, withRecord(f, view, []any{"metadata", "labels"}, `{"karpgate.io/environment":"production"}`, `{}`)), mustJSON(f, view), true)
	f.Add(mustJSON(f, asV1Beta1(f, nodePool("p", fullRef, map[string]any{"nodes": "0", "reasons": []any{"Underutilized"}}))), []byte(`{"apiVersion":"karpenter.sh/v1beta1","kind":"NodePool","spec":{}}`), true)
	f.Add([]byte(`{"apiVersion":"karpenter.k8s.aws/v1beta1","kind":"EC2NodeClass","metadata":{"annotations":{"karpgate.io/restore-v1":"{\"records\":[{\"path\":[\"spec\",0]},{\"path\":[\"metadata\",\"labels\",\"karpgate.io/x\"],\"original\":1}],\"metadata\":{}}"}},"spec":{"amiFamily":"AL2023","tags":{"karpgate.io/environment":"prod"}}}`),
		[]byte(`{"apiVersion":"karpenter.k8s.aws/v1beta1","kind":"EC2NodeClass","spec":{"amiFamily":"Ubuntu"}}`), true)
	// NodeOverlays, judged as sent by the rules for every kind (the waiver
	// rules here), whatever their version.
	f.Add([]byte(`{"apiVersion":"karpenter.sh/v1alpha1","kind":"NodeOverlay","metadata":{"name":"o","annotations":{"karpgate.io/waive-KG101":""}},"spec":{"weight":"x","price":[]}}`), []byte(`{"apiVersion":"karpenter.sh/v1alpha1","kind":"NodeOverlay","spec":7}`), true)
	f.Add([]byte(`{"apiVersion":"karpenter.sh/v9","kind":"NodeOverlay","metadata":{"annotations":{"karpgate.io/waivers-set-by":"{"}}}`), []byte(`null`), false)
	handlers := fuzzHandlers(f, pinning)
	f.Fuzz(func(t *testing.T, object, oldObject []byte, update bool) {
		if !json.Valid(object) || !json.Valid(oldObject) {
			t.Skip("the review would not be JSON; FuzzAdmissionReview covers that")
		}
		op := "CREATE"
		if update {
			op = "UPDATE"
		}
		body := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"kind":"NodePool"},"name":"p","operation":"` + op + `","object":` + string(object) + `,"oldObject":` + string(oldObject) + `}}`)
		for _, h := range handlers {
			resp := checkAnswer(t, h, body)
			if resp.Patch == nil {
				continue
			}
			// The API server applies the patch to the object as it holds
			// it (integers as int64) and encoding/json writes it; every
			// patch karpgate sends applies.
			decoded, err := conversion.DecodeObject(object)
			if err != nil {
				t.Fatal(err)
			}
			applyAsAPIServer(t, mustJSON(t, decoded), resp.Patch)
		}
	})
}
