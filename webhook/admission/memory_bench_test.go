package admission

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/test/benchratio"
	"github.com/karpgate/karpgate/webhook"
)

// BenchmarkReviewMemory judges two reviews and reports the peak heap each
// took per body byte (peak-B/body-B) and against what the webhook charges
// it (peak/charged: MemoryFactor per byte plus MemoryPerValue per JSON
// value), which must stay at or below 1. "labels" is an UPDATE of a
// NodePool with 2000 template labels (about 1 MiB of review, the size
// etcd's object limit allows), the shape MemoryFactor is measured on, and
// "labels-v1beta1" the same as v1beta1, which is judged twice, as sent
// and converted as stored;
// "wide" is a CREATE carrying a million-element array of one-digit
// numbers in 2 MiB, the shape MemoryPerValue is measured on.
func BenchmarkReviewMemory(b *testing.B) {
	pool := nodePool("big", fullRef)
	labels := pool["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
	for i := range 2000 {
		labels[fmt.Sprintf("team.example.com/label-%04d", i)] = fmt.Sprintf("value-%0200d", i)
	}
	old := patch(b, pool, `[{"op":"replace","path":"/spec/template/metadata/labels/team","value":"b"}]`)
	wide := nodePool("wide", fullRef)
	wide["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["wide"] = "RAW"
	wideBody := bytes.Replace(request{op: admissionv1.Create, object: wide}.body(b), []byte(`"RAW"`), []byte("["+strings.Repeat("0,", 1<<20)+"0]"), 1)
	hook := NewValidatingWebhook(newEngine(b, ""), logr.Discard())
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"labels", request{op: admissionv1.Update, object: pool, old: old}.body(b)},
		// The same write as v1beta1, also judged as stored (converted).
		{"labels-v1beta1", request{op: admissionv1.Update, object: asV1Beta1(b, pool), old: asV1Beta1(b, old)}.body(b)},
		{"wide", wideBody},
	} {
		b.Run(c.name, func(b *testing.B) {
			charged := float64(MemoryFactor*int64(len(c.body)) + MemoryPerValue*webhook.ValueCount(c.body))
			var worst float64
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/validate", nil)
				req.Body, req.ContentLength = serving.NewBuffered(c.body), int64(len(c.body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				peak := benchratio.PeakHeap(func() { hook.ServeHTTP(rec, req) })
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
				worst = max(worst, float64(peak))
			}
			b.ReportMetric(worst/float64(len(c.body)), "peak-B/body-B")
			b.ReportMetric(worst/charged, "peak/charged")
			b.ReportMetric(float64(len(c.body)), "body-B")
			if worst > charged {
				b.Errorf("a review took %.0f bytes at peak, above the %.0f charged for it (MemoryFactor %d a byte, MemoryPerValue %d a value): raise them",
					worst, charged, MemoryFactor, MemoryPerValue)
			}
		})
	}
}
