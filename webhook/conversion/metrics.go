package conversion

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// A failed review is still HTTP 200 (the failure is in the body), so
// controller-runtime's per-endpoint counters cannot tell it from a success;
// this counter can, and a failure means the API server could not read or
// write Karpenter objects at that version.
var reviewsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "karpgate_conversion_reviews_total",
	Help: "ConversionReviews answered, by the version asked for (v1, v1beta1; other for anything that is no Karpenter version) and result (success, failure).",
}, []string{"desired_version", "result"})

func init() {
	ctrlmetrics.Registry.MustRegister(reviewsTotal)
}

// Results, as metric labels.
const (
	resultSuccess = "success"
	resultFailure = "failure"
)

// versionOther stands for any desired version that is not a Karpenter
// group/version: the label comes from the request, and a client must not
// be able to mint series.
const versionOther = "other"

func countReview(desiredAPIVersion string, failed bool) {
	result := resultSuccess
	if failed {
		result = resultFailure
	}
	reviewsTotal.WithLabelValues(versionLabel(desiredAPIVersion), result).Inc()
}

func versionLabel(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return versionOther
	}
	for _, k := range karpenter.Kinds {
		if k.Group != gv.Group {
			continue
		}
		for _, v := range k.Versions {
			if v == gv.Version {
				return v
			}
		}
	}
	return versionOther
}
