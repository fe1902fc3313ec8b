package twins

import (
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

// BenchmarkTwinsPerWrite is what the twins cost the API server per write:
// one op evaluates karpgate's policy under its three bindings (deny, warn,
// audit), as the API server does for every NodePool or EC2NodeClass write
// the match conditions hand over. The baseline, measured in the same run,
// is the validating webhook judging the same request with the Rego rules
// (x-webhook: how many times longer the policy takes; the webhook's
// network hop is not counted).
func BenchmarkTwinsPerWrite(b *testing.B) {
	h := harnesses(b)[0]
	for _, bc := range []struct{ name, source string }{
		{"EC2NodeClass", "examples/ec2nodeclass-production-pinned.yaml"},
		{"NodePool", "verdicts/nodepools.yaml NodePool/np-valid-full "},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := benchRequest(b, h, bc.source)
			start := time.Now()
			for range b.N {
				h.rego(b, r)
			}
			webhook := time.Since(start)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := h.policy(b, r); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(webhook.Nanoseconds())/float64(b.N), "webhook-ns/op")
			b.ReportMetric(float64(b.Elapsed())/float64(webhook), "x-webhook")
		})
	}
}

// benchRequest is the create of the corpus object whose name contains
// name, as the API server hands it to admission.
func benchRequest(b *testing.B, h *harness, name string) request {
	b.Helper()
	for _, s := range readCorpus(b) {
		if !strings.Contains(s.name, name) {
			continue
		}
		reqs, _ := judgedRequests(b, cachedSet, []source{s}, waivableTwins(h))
		for _, r := range reqs {
			if r.op == admissionv1.Create {
				return r
			}
		}
	}
	b.Fatalf("no create of %q in the corpus", name)
	return request{}
}
