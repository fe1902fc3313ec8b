package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/loopback"
	"github.com/karpgate/karpgate/test/background"
	"github.com/karpgate/karpgate/test/wait"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
)

func writeCerts(t *testing.T, dir string) *localca.Bundle {
	t.Helper()
	b, err := localca.New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	return b
}

func client(caPEM []byte, maxTLS uint16) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	// The timeout guards against a hang; it is not a latency check.
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: maxTLS, MinVersion: tls.VersionTLS10},
	}}
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestServesRoutesOverTLSAndReloadsCertificates(t *testing.T) {
	dir := t.TempDir()
	first := writeCerts(t, dir)
	port := loopback.TestPort(t)
	srv, err := New(Options{
		CertDir: dir, Host: "127.0.0.1", Port: port, CertReloadInterval: 200 * time.Millisecond,
		Routes: []Route{
			{Path: "/one", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "one") })},
			{Path: "/two", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "two") })},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveUntilTestEnds(t, srv, port)

	c := client(first.CAPEM, 0)
	for _, route := range []string{"one", "two"} {
		if body, err := get(c, base+"/"+route); err != nil || body != route {
			t.Fatalf("/%s: %q %v", route, body, err)
		}
	}
	if _, err := get(client(first.CAPEM, tls.VersionTLS11), base+"/one"); err == nil {
		t.Fatal("a TLS 1.1 client was served; the minimum is TLS 1.2")
	}

	second := writeCerts(t, dir)
	wait.For(t, "the new certificate to be served", func() bool {
		body, err := get(client(second.CAPEM, 0), base+"/one")
		return err == nil && body == "one"
	})
}

func TestOptionsAreChecked(t *testing.T) {
	dir := t.TempDir()
	writeCerts(t, dir)
	ok := http.NotFoundHandler()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no folder", Options{Routes: []Route{{Path: "/a", Handler: ok}}}, "pass --cert-dir"},
		{"no routes", Options{CertDir: dir}, "no routes"},
		{"relative path", Options{CertDir: dir, Routes: []Route{{Path: "a", Handler: ok}}}, `route "a" needs a path starting with /`},
		{"no handler", Options{CertDir: dir, Routes: []Route{{Path: "/a", Handler: nil}}}, `route "/a" needs`},
		{"twice", Options{CertDir: dir, Routes: []Route{{Path: "/a", Handler: ok}, {Path: "/a", Handler: ok}}}, `route "/a" registered twice`},
		{"no certificate", Options{CertDir: t.TempDir(), Routes: []Route{{Path: "/a", Handler: ok}}}, "loading the serving certificate"},
		{"budget below one request", Options{CertDir: dir, Limits: Limits{MemoryBudget: 1000}, Routes: []Route{{Path: "/a", Handler: ok, MaxBodyBytes: 200, MemoryFactor: 6}}},
			"route /a: one request at its 200B body limit needs 1KiB of memory, more than the 1000B budget for requests; raise the memory limit (--memory-limit)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// serveUntilTestEnds starts srv until the test ends (or cancel), waits until
// it serves, and returns its base URL; the test fails if Start returns an
// error.
func serveUntilTestEnds(t *testing.T, srv *Server, port int) (base string, cancel func()) {
	t.Helper()
	run := background.Start(t, "Start", srv.Start)
	wait.For(t, "the server to be ready", func() bool { return srv.StartedChecker()(nil) == nil })
	return "https://127.0.0.1:" + strconv.Itoa(port), run.Cancel
}
