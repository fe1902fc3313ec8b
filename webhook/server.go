package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Certificate file names inside CertDir, as cert-manager and
// internal/localca write them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// DefaultPort is where the API server is usually pointed.
const DefaultPort = 9443

// Route is one endpoint.
type Route struct {
	Path    string // e.g. "/convert"
	Handler http.Handler
	// MaxBodyBytes overrides Limits.MaxBodyBytes for this route: conversion
	// reviews carry whole lists and need more than one admission review.
	MaxBodyBytes int64
}

// Options configure a Server.
type Options struct {
	// CertDir holds tls.crt and tls.key. They are re-read when they change.
	CertDir string
	// Host to listen on; empty means every interface.
	Host string
	// Port to listen on; 0 means DefaultPort.
	Port int
	// CertReloadInterval is how often the certificate files are re-read
	// besides on file events; 0 keeps certwatcher's default of 10s.
	CertReloadInterval time.Duration
	Routes             []Route
	// Limits bound concurrency, body size and time per request.
	Limits Limits
}

// Server serves the routes over TLS until its context ends. It is a
// controller-runtime webhook server, so a manager runs it (on every
// replica, leader or not) and drains it last on shutdown.
type Server struct {
	ctrlwebhook.Server
	certs *certwatcher.CertWatcher
}

// New checks the options and loads the certificate, so that a missing or
// broken certificate stops `karpgate serve` at once with a clear message.
func New(opts Options) (*Server, error) {
	if opts.CertDir == "" {
		return nil, errors.New("webhook: no certificate folder; pass --cert-dir with tls.crt and tls.key")
	}
	if len(opts.Routes) == 0 {
		return nil, errors.New("webhook: no routes to serve")
	}
	seen := map[string]bool{}
	for _, r := range opts.Routes {
		if !strings.HasPrefix(r.Path, "/") || r.Handler == nil {
			return nil, fmt.Errorf("webhook: route %q needs a path starting with / and a handler", r.Path)
		}
		if seen[r.Path] {
			return nil, fmt.Errorf("webhook: route %q registered twice", r.Path)
		}
		seen[r.Path] = true
	}
	certs, err := certwatcher.New(filepath.Join(opts.CertDir, CertFile), filepath.Join(opts.CertDir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("webhook: loading the serving certificate from %s: %w", opts.CertDir, err)
	}
	if opts.CertReloadInterval > 0 {
		certs = certs.WithWatchInterval(opts.CertReloadInterval)
	}
	certs.RegisterCallback(observeServingCertificate)
	port := opts.Port
	if port == 0 {
		port = DefaultPort
	}
	webhooks := ctrlwebhook.NewServer(ctrlwebhook.Options{
		Host:    opts.Host,
		Port:    port,
		CertDir: opts.CertDir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			// TLS 1.3 is negotiated whenever the client offers it.
			c.MinVersion = tls.VersionTLS12
			c.GetCertificate = certs.GetCertificate
			// HTTP/1.1 only: the API server keeps connections alive
			// either way, and HTTP/2 exposes the server to stream floods
			// (CVE-2023-44487) that the per-request limits cannot see.
			c.NextProtos = []string{"http/1.1"}
		}},
	})
	limits := newLimiter(opts.Limits)
	for _, r := range opts.Routes {
		webhooks.Register(r.Path, limits.wrap(r.Path, r.MaxBodyBytes, r.Handler))
	}
	return &Server{Server: webhooks, certs: certs}, nil
}

// Start serves until ctx ends, reloading the certificate as it changes.
func (s *Server) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchErr := make(chan error, 1)
	go func() { watchErr <- s.certs.Start(ctx) }()
	err := s.Server.Start(ctx)
	cancel()
	if werr := <-watchErr; err == nil && werr != nil {
		err = fmt.Errorf("webhook: certificate watcher: %w", werr)
	}
	return err
}

// StartedChecker reports ready once the TLS listener accepts connections
// with the loaded certificate.
func (s *Server) StartedChecker() healthz.Checker { return s.Server.StartedChecker() }
