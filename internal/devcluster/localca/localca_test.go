package localca

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestBundleServesTLSTrustedOnlyThroughItsCA(t *testing.T) {
	b, err := New([]string{"127.0.0.1", "localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, KeyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", info.Mode(), err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.CAPEM) {
		t.Fatal("CA PEM does not parse")
	}
	trusted := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		resp, err := trusted.Get("https://" + net.JoinHostPort(host, port))
		if err != nil {
			t.Fatalf("%s through the CA: %v", host, err)
		}
		resp.Body.Close()
	}
	other, _ := New([]string{"127.0.0.1"}, time.Hour)
	otherPool := x509.NewCertPool()
	otherPool.AppendCertsFromPEM(other.CAPEM)
	untrusted := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: otherPool}}}
	if resp, err := untrusted.Get(srv.URL); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a different CA must not verify this certificate")
	}
}

func TestNewNeedsAHost(t *testing.T) {
	if _, err := New(nil, time.Hour); err == nil {
		t.Fatal("no hosts must be an error")
	}
}

func TestReissueKeepsTheCA(t *testing.T) {
	first, err := New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	second, err := first.Reissue([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if string(second.CAPEM) != string(first.CAPEM) || string(second.CertPEM) == string(first.CertPEM) || string(second.KeyPEM) == string(first.KeyPEM) {
		t.Fatal("a reissue must keep the CA and change the certificate and key")
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(first.CAPEM)
	block, _ := pem.Decode(second.CertPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Fatalf("the reissued certificate does not verify against the first CA: %v", err)
	}
}
