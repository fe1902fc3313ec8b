package admission

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/devcluster/loopback"
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

// startTLSServer serves routes within limits until tb ends, verifying
// client certificates against its CA when verifyClients (as serve does
// with --client-ca-file), and returns once it serves.
func startTLSServer(tb testing.TB, limits webhook.Limits, verifyClients bool, routes ...webhook.Route) *tlsServer {
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
	opts := webhook.Options{CertDir: dir, Host: "127.0.0.1", Port: port, Limits: limits, Routes: routes}
	if verifyClients {
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
