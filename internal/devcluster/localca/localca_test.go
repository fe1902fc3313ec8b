package localca

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
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
	if !pool.Equal(b.CertPool()) {
		t.Fatal("CertPool holds other than the CA of CAPEM")
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

// A server that verifies clients against the bundle's CertPool accepts a
// ClientTLS certificate and refuses one another CA signed.
func TestClientTLSIsVerifiedThroughCertPool(t *testing.T) {
	b, err := New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := tls.X509KeyPair(b.CertPEM, b.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving}, ClientCAs: b.CertPool(), ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()
	other, err := New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		signer *Bundle
		wantOK bool
	}{{"signed by the CA", b, true}, {"signed by another CA", other, false}} {
		t.Run(tt.name, func(t *testing.T) {
			cert, err := tt.signer.ClientTLS("kube-apiserver")
			if err != nil {
				t.Fatal(err)
			}
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: b.CertPool(), Certificates: []tls.Certificate{cert}}}}
			resp, err := c.Get(srv.URL)
			if !tt.wantOK {
				if err == nil {
					_ = resp.Body.Close()
					t.Fatal("the server accepted a client certificate another CA signed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got, _ := io.ReadAll(resp.Body); string(got) != "kube-apiserver" {
				t.Errorf("the server saw client %q, want kube-apiserver", got)
			}
		})
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
