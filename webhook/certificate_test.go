package webhook

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/devcluster/loopback"
	"github.com/karpgate/karpgate/test/wait"
)

// TestServingCertificateExpiryFollowsReloads: the gauge carries the notAfter
// of the certificate being served, from the first load and after a rotation.
func TestServingCertificateExpiryFollowsReloads(t *testing.T) {
	dir := t.TempDir()
	notAfter := func(b *localca.Bundle) float64 {
		block, _ := pem.Decode(b.CertPEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return float64(cert.NotAfter.Unix())
	}
	first := writeCerts(t, dir) // valid for an hour
	port := loopback.TestPort(t)
	srv, err := New(Options{
		CertDir: dir, Host: "127.0.0.1", Port: port, CertReloadInterval: 200 * time.Millisecond,
		Routes: []Route{{Path: "/ok", Handler: http.NotFoundHandler()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testutil.ToFloat64(servingCertificateExpiry), notAfter(first); got != want {
		t.Fatalf("after New: expiry %v, want the loaded certificate's %v", got, want)
	}

	serveUntilTestEnds(t, srv, port)
	rotated, err := localca.New([]string{"127.0.0.1"}, 90*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := rotated.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	want := notAfter(rotated)
	if want == notAfter(first) {
		t.Fatal("the rotated certificate must expire at another time, or the test proves nothing")
	}
	wait.For(t, "the gauge to follow the rotated certificate", func() bool {
		return testutil.ToFloat64(servingCertificateExpiry) == want
	})
}
