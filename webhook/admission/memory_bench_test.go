package admission

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/test/benchratio"
)

// BenchmarkReviewMemory judges an UPDATE of a NodePool with 2000 template
// labels (about 1 MiB of review, the size etcd's object limit allows) and
// reports the peak heap it took per body byte (peak-B/body-B), the figure
// MemoryFactor must stay above.
func BenchmarkReviewMemory(b *testing.B) {
	pool := nodePool("big", fullRef)
	labels := pool["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
	for i := range 2000 {
		labels[fmt.Sprintf("team.example.com/label-%04d", i)] = fmt.Sprintf("value-%0200d", i)
	}
	old := patch(b, pool, `[{"op":"replace","path":"/spec/template/metadata/labels/team","value":"b"}]`)
	body := request{op: admissionv1.Update, object: pool, old: old}.body(b)
	hook := NewValidatingWebhook(newEngine(b, ""), logr.Discard())
	var worst float64
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/validate", nil)
		req.Body, req.ContentLength = serving.NewBuffered(body), int64(len(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		peak := benchratio.PeakHeap(func() { hook.ServeHTTP(rec, req) })
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		worst = max(worst, float64(peak)/float64(len(body)))
	}
	b.ReportMetric(worst, "peak-B/body-B")
	b.ReportMetric(float64(len(body)), "body-B")
	if worst > MemoryFactor {
		b.Errorf("a review took %.1f bytes per body byte at peak, above MemoryFactor %d: raise it", worst, MemoryFactor)
	}
}
