package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/devcluster/loopback"
	"github.com/karpgate/karpgate/internal/serving"
)

// idleClient opens one keep-alive connection from the loopback address
// src, sends one request on it and leaves the connection open and idle,
// as a client that parks connections would. It reports whether the
// request was answered within patience.
func idleClient(ctx context.Context, caPEM []byte, base, src string) (*http.Transport, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"},
		DialContext:         (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     time.Hour,
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ok", http.NoBody)
	if err != nil {
		return tr, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return tr, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return tr, resp.Body.Close()
}

// TestIdleConnectionsCannotStarveTheServer is the connection starvation
// the review read from the code: 300 clients each park an idle keep-alive
// connection, and then a fresh client (from 127.0.0.1, as the API server
// would be) asks for an answer and readiness is checked. With one listener
// cap for everything, the first 256 parked connections held every slot for
// the idle timeout (90 s), and the fresh client and the readiness check
// waited in the kernel's accept queue behind the rest. Now the listener
// closes an idle connection to make room for a new one. With a client CA,
// or with the API server's address trusted, the API server's own
// keep-alive connection, opened before the strangers came, also outlives
// them: it is never closed to make room for them.
func TestIdleConnectionsCannotStarveTheServer(t *testing.T) {
	for _, tt := range []struct {
		name              string
		sources           []string
		clientCA, trusted bool
	}{
		{"from one address", []string{"127.0.0.2"}, false, false},
		{"from three addresses", []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}, false, false},
		{"from three addresses, with a client CA", []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}, true, false},
		{"from three addresses, with the API server's address trusted", []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) { parkIdleConnections(t, 300, tt.sources, tt.clientCA, tt.trusted) })
	}
}

// beforeIdleTimeout bounds each attempt: a connection the server does not
// take waits in the accept queue until an idle timeout frees a slot, which
// is the starvation itself, and no busy machine takes that long for one
// TLS handshake and request.
const beforeIdleTimeout = serving.IdleTimeout

func parkIdleConnections(t *testing.T, parked int, sources []string, clientCA, trusted bool) {
	dir := t.TempDir()
	bundle := writeCerts(t, dir)
	port := loopback.TestPort(t)
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	opts := Options{CertDir: dir, Host: "127.0.0.1", Port: port, Routes: []Route{{Path: "/ok", Handler: ok}}}
	if clientCA {
		opts.ClientCAFile = filepath.Join(dir, localca.CAFile)
	}
	if trusted {
		opts.TrustedSources = serving.TrustedSources{netip.MustParsePrefix("127.0.0.1/32")}
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveUntilTestEnds(t, srv, port)
	var apiServer *apiServerClient
	if clientCA || trusted {
		apiServer = newAPIServerClient(t, bundle, base, clientCA)
	}

	var (
		mu       sync.Mutex
		answered int
		group    sync.WaitGroup
	)
	for i := range parked {
		group.Add(1)
		go func() {
			defer group.Done()
			attempt, stop := context.WithTimeout(t.Context(), beforeIdleTimeout)
			defer stop()
			tr, err := idleClient(attempt, bundle.CAPEM, base, sources[i%len(sources)])
			t.Cleanup(tr.CloseIdleConnections)
			if err == nil {
				mu.Lock()
				answered++
				mu.Unlock()
			}
		}()
	}
	group.Wait()
	t.Logf("CONNECTIONS %d of %d parked clients answered; %d connections held open by the server", answered, parked, srv.OpenConnections())

	if err := srv.StartedChecker()(nil); err != nil {
		t.Errorf("with %d idle connections parked, readiness fails: %v", parked, err)
	}
	fresh, stop := context.WithTimeout(t.Context(), beforeIdleTimeout)
	defer stop()
	tr, err := idleClient(fresh, bundle.CAPEM, base, "127.0.0.1")
	tr.CloseIdleConnections()
	if err != nil {
		t.Errorf("with %d idle connections parked, a fresh client was not answered: %v", parked, err)
	}
	// The server's idle timeout may close the API server's connection
	// too, when parking took that long; only a closing before it counts.
	if apiServer != nil && time.Since(apiServer.used) < serving.IdleTimeout {
		if reused, err := apiServer.post(); err != nil || !reused {
			t.Errorf("with %d idle connections parked, the API server's keep-alive connection was closed (reused %v, %v)", parked, reused, err)
		}
	}
	if open := srv.OpenConnections(); open > serving.DefaultMaxConnections {
		t.Errorf("%d connections open, above the listener's %d", open, serving.DefaultMaxConnections)
	}
}

// apiServerClient holds one keep-alive connection from 127.0.0.1, with
// the API server's client certificate when withCert.
type apiServerClient struct {
	tr   *http.Transport
	base string
	used time.Time // when its last request was answered
}

func newAPIServerClient(t *testing.T, bundle *localca.Bundle, base string, withCert bool) *apiServerClient {
	t.Helper()
	conf := &tls.Config{RootCAs: bundle.CertPool(), ServerName: "127.0.0.1"}
	if withCert {
		cert, err := bundle.ClientTLS("kube-apiserver")
		if err != nil {
			t.Fatal(err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	c := &apiServerClient{base: base, tr: &http.Transport{
		TLSClientConfig:     conf,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     time.Hour,
	}}
	t.Cleanup(c.tr.CloseIdleConnections)
	if _, err := c.post(); err != nil {
		t.Fatal(err)
	}
	return c
}

// post sends one request and says whether it went over the connection
// an earlier request left open.
func (c *apiServerClient) post() (reused bool, err error) {
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/ok", http.NoBody)
	if err != nil {
		return false, err
	}
	resp, err := c.tr.RoundTrip(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	c.used = time.Now()
	return reused, resp.Body.Close()
}

// TestClientCertificatesAreVerifiedBeforeASlot: with --client-ca-file,
// the admission routes answer only callers with a certificate that CA
// signed, and refuse the others before they take a slot; conversion, to
// which the API server presents no certificate, still answers.
func TestClientCertificatesAreVerifiedBeforeASlot(t *testing.T) {
	dir := t.TempDir()
	bundle := writeCerts(t, dir)
	port := loopback.TestPort(t)
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv, err := New(Options{CertDir: dir, Host: "127.0.0.1", Port: port, ClientCAFile: filepath.Join(dir, "ca.crt"), Routes: []Route{
		{Path: "/validate", Handler: ok, RequireClientCert: true},
		{Path: "/convert", Handler: ok},
	}})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveUntilTestEnds(t, srv, port)

	apiServer, err := bundle.ClientTLS("kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := localca.New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := stranger.ClientTLS("kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	caller := func(cert *tls.Certificate) *http.Client {
		c := client(bundle.CAPEM, 0)
		if cert != nil {
			c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{*cert}
		}
		return c
	}
	before := testutil.ToFloat64(rejectedRequests.WithLabelValues("/validate", "unauthenticated"))
	for _, tt := range []struct {
		name   string
		cert   *tls.Certificate
		path   string
		status int // 0: the handshake fails
	}{
		{"the API server's certificate", &apiServer, "/validate", http.StatusOK},
		{"no certificate", nil, "/validate", http.StatusUnauthorized},
		{"no certificate, conversion", nil, "/convert", http.StatusOK},
		{"a certificate another CA signed", &forged, "/convert", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := caller(tt.cert).Post(base+tt.path, "application/json", strings.NewReader("{}"))
			if tt.status == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("served with status %d, want the handshake refused", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
	if got := testutil.ToFloat64(rejectedRequests.WithLabelValues("/validate", "unauthenticated")) - before; got != 1 {
		t.Errorf("unauthenticated rejections rose by %v, want 1", got)
	}
}
