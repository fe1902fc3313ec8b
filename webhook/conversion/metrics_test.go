package conversion

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestReviewsAreCountedByVersionAndResult: failures (HTTP 200 with a
// Failure result) are counted apart from successes, and a desired version
// that is not Karpenter's cannot create a series of its own.
func TestReviewsAreCountedByVersionAndResult(t *testing.T) {
	tests := []struct {
		name, desired, objects string
		version, result        string
	}{
		{"success to v1", "karpenter.sh/v1", nodePoolB, "v1", resultSuccess},
		{"success to v1beta1", "karpenter.sh/v1beta1", nodePoolV1, "v1beta1", resultSuccess},
		{"failure", "karpenter.sh/v1", `"text"`, "v1", resultFailure},
		{"a version Karpenter does not have", "karpenter.sh/v2", nodePoolB, versionOther, resultFailure},
		{"another group", "example.com/v1", nodePoolB, versionOther, resultFailure},
		{"not group/version", "a/b/c", nodePoolB, versionOther, resultFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter := reviewsTotal.WithLabelValues(tt.version, tt.result)
			before := testutil.ToFloat64(counter)
			if rec, review := post(t, &Handler{}, reviewBody("apiextensions.k8s.io/v1", tt.desired, tt.objects)); review == nil {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if got := testutil.ToFloat64(counter) - before; got != 1 {
				t.Errorf("karpgate_conversion_reviews_total{desired_version=%q,result=%q} grew by %v, want 1", tt.version, tt.result, got)
			}
		})
	}
	if n := testutil.CollectAndCount(reviewsTotal); n > 4 {
		t.Errorf("%d series: only v1, v1beta1 and other by two results may exist", n)
	}
}
