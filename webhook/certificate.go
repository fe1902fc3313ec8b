package webhook

import (
	"crypto/tls"
	"crypto/x509"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// servingCertificateExpiry lets an alert fire before the certificate the API
// server trusts runs out: when it does, every conversion fails, which is a
// Karpenter outage. It follows the certificate in use, not the file: a pod
// that failed to reload keeps reporting the old date.
var servingCertificateExpiry = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "karpgate_serving_certificate_expiration_timestamp_seconds",
	Help: "When the serving certificate in use expires (its notAfter, in Unix seconds); updated on every reload of --cert-dir.",
})

func init() {
	ctrlmetrics.Registry.MustRegister(servingCertificateExpiry)
}

// observeServingCertificate is certwatcher's callback: it runs once for the
// certificate New loaded and again after each reload.
func observeServingCertificate(cert tls.Certificate) {
	leaf := cert.Leaf
	if leaf == nil && len(cert.Certificate) > 0 {
		parsed, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			// certwatcher parsed the same bytes before calling: unreachable,
			// and a wrong date is worse than an old one.
			return
		}
		leaf = parsed
	}
	if leaf != nil {
		servingCertificateExpiry.Set(float64(leaf.NotAfter.Unix()))
	}
}
