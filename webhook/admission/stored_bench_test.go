package admission

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/test/benchratio"
)

// BenchmarkJudgedAsStored is what judging a v1beta1 write as stored costs
// the validating webhook, against the same change written as v1, which is
// judged once (x-v1-p50, x-v1-p99): "honest" relabels a production
// EC2NodeClass through its v1beta1 view, which carries an honest restore
// record; "forged" adds a record that would store @latest, against the v1
// UPDATE to @latest (both denied; the record check evaluates twice more).
// In process, without TLS: the handler's cost alone.
func BenchmarkJudgedAsStored(b *testing.B) {
	hook := NewValidatingWebhook(newEngine(b, ""), logr.Discard())
	stored := nodeClass("production", production, "al2023@v20240807")
	stored["spec"].(map[string]any)["kubelet"] = map[string]any{"maxPods": int64(110)}
	stored = withAnnotations(stored, map[string]any{"example.com/owner": "web"})
	view := asV1Beta1(b, stored)
	relabel := `[{"op":"add","path":"/metadata/labels/team","value":"web"}]`
	forged := withRecord(b, patch(b, view, relabel), []any{"spec", "amiSelectorTerms"}, `[{"alias":"al2023@v20240807"}]`, `[{"alias":"al2023@latest"}]`)
	latest := patch(b, stored, `[{"op":"add","path":"/metadata/labels/team","value":"web"},{"op":"replace","path":"/spec/amiSelectorTerms/0/alias","value":"al2023@latest"}]`)
	for _, c := range []struct {
		name     string
		body, v1 []byte
		allowed  bool
	}{
		{"honest", request{op: admissionv1.Update, object: patch(b, view, relabel), old: view}.body(b),
			request{op: admissionv1.Update, object: patch(b, stored, relabel), old: stored}.body(b), true},
		{"forged", request{op: admissionv1.Update, object: forged, old: view}.body(b),
			request{op: admissionv1.Update, object: latest, old: stored}.body(b), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			call := func(body []byte, allowed bool) func() {
				return func() {
					req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					hook.ServeHTTP(rec, req)
					if !bytes.Contains(rec.Body.Bytes(), []byte(`"allowed":`+map[bool]string{true: "true", false: "false"}[allowed])) {
						b.Fatalf("want allowed=%v: %s", allowed, rec.Body)
					}
				}
			}
			benchratio.Paired(b, call(c.body, c.allowed), call(c.v1, c.allowed), "x-v1")
		})
	}
}
