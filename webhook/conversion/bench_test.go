package conversion

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/test/benchratio"
)

// BenchmarkReviewMemory converts a review of 3000 v1beta1 NodePools (about
// 1 MiB) and reports the peak heap it took per body byte (peak-B/body-B),
// the figure MemoryFactor must stay above, and the same for the body alone
// (x-body: 1 by definition, the baseline).
func BenchmarkReviewMemory(b *testing.B) {
	var objs []string
	for i := range 3000 {
		objs = append(objs, strings.Replace(nodePoolA, `"name":"a"`, fmt.Sprintf(`"name":"a%d"`, i), 1))
	}
	body := []byte(reviewBody("apiextensions.k8s.io/v1", "karpenter.sh/v1", objs...))
	h := &Handler{}
	var worst float64
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/convert", nil)
		req.Body, req.ContentLength = serving.NewBuffered(body), int64(len(body))
		req.Header.Set("Content-Type", "application/json")
		// The server writes the answer to the connection as it comes;
		// a recorder would keep it.
		rec := &countingWriter{header: http.Header{}}
		peak := benchratio.PeakHeap(func() { h.ServeHTTP(rec, req) })
		if rec.code != 0 || rec.n < int64(len(body)) {
			b.Fatalf("status %d after %d bytes", rec.code, rec.n)
		}
		worst = max(worst, float64(peak)/float64(len(body)))
	}
	b.ReportMetric(worst, "peak-B/body-B")
	if worst > MemoryFactor {
		b.Errorf("a review took %.1f bytes per body byte at peak, above MemoryFactor %d: raise it", worst, MemoryFactor)
	}
}

// countingWriter is an http.ResponseWriter that keeps only counts.
type countingWriter struct {
	header http.Header
	code   int
	n      int64
}

func (c *countingWriter) Header() http.Header  { return c.header }
func (c *countingWriter) WriteHeader(code int) { c.code = code }
func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
