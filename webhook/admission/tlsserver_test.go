package admission

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/devcluster/loopback"
	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/test/background"
	"github.com/karpgate/karpgate/test/wait"
	"github.com/karpgate/karpgate/webhook"
)

// tlsServer is a webhook server on loopback, serving with a fresh local CA.
type tlsServer struct {
	base   string // https://127.0.0.1:<port>
	srv    *webhook.Server
	bundle *localca.Bundle // clients trust bundle.CertPool(); bundle.ClientTLS signs the API server's certificate
}

// tlsServerOptions are how a test server is set up as `karpgate serve`
// would be: its limits, and how it knows the API server.
type tlsServerOptions struct {
	limits webhook.Limits
	// verifyClients checks client certificates against the server's CA,
	// as serve does with --client-ca-file.
	verifyClients bool
	// trusted are the API server's addresses, as serve takes them with
	// --trusted-source-cidrs.
	trusted []string
}

// startTLSServer serves routes until tb ends and returns once it serves.
func startTLSServer(tb testing.TB, o tlsServerOptions, routes ...webhook.Route) *tlsServer {
	tb.Helper()
	dir := tb.TempDir()
	bundle, err := localca.New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	if err := bundle.WriteDir(dir); err != nil {
		tb.Fatal(err)
	}
	port := loopback.TestPort(tb)
	trusted, err := serving.ParseTrustedSources(o.trusted)
	if err != nil {
		tb.Fatal(err)
	}
	opts := webhook.Options{CertDir: dir, Host: "127.0.0.1", Port: port, Limits: o.limits, TrustedSources: trusted, Routes: routes}
	if o.verifyClients {
		opts.ClientCAFile = filepath.Join(dir, localca.CAFile)
	}
	srv, err := webhook.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	background.Start(tb, "webhook server", srv.Start)
	wait.For(tb, "the server to start", func() bool { return srv.StartedChecker()(nil) == nil })
	return &tlsServer{base: fmt.Sprintf("https://127.0.0.1:%d", port), srv: srv, bundle: bundle}
}
