package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/karpgate/karpgate/internal/serving"
)

// Certificate file names inside CertDir, as cert-manager and
// internal/devcluster/localca write them.
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
	// MemoryFactor is what handling one body byte costs at peak on this
	// route; 0 means DefaultMemoryFactor.
	MemoryFactor int
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
	// Limits bound connections, concurrency, memory, body size and time per
	// request.
	Limits Limits
	// ShutdownTimeout bounds how long Start waits, once its context ends,
	// for requests in flight; 0 means a minute. The manager's graceful
	// shutdown timeout bounds it too.
	ShutdownTimeout time.Duration
	// Log receives handler panics and the server's own errors.
	Log logr.Logger
}

// Server serves the routes over TLS until its context ends. It is a
// controller-runtime webhook server (routes registered on it are
// instrumented, and a manager runs it on every replica and stops it last),
// but it listens itself, through package serving, so that its connections
// are capped.
type Server struct {
	ctrlwebhook.Server
	certs   *certwatcher.CertWatcher
	opts    Options
	addr    atomic.Pointer[string]
	started chan struct{}
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
	if opts.Port == 0 {
		opts.Port = DefaultPort
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = time.Minute
	}
	limits := newLimiter(opts.Limits, opts.Log)
	routes := make([]http.Handler, len(opts.Routes))
	for i, r := range opts.Routes {
		rl, err := limits.forRoute(r)
		if err != nil {
			return nil, err
		}
		routes[i] = limits.wrap(r.Path, rl, r.Handler)
		// Each endpoint's panic counter exists at zero from the start, so
		// that increase() in an alert sees the first panic.
		panics.WithLabelValues(r.Path)
	}
	certs, err := certwatcher.New(filepath.Join(opts.CertDir, CertFile), filepath.Join(opts.CertDir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("webhook: loading the serving certificate from %s: %w", opts.CertDir, err)
	}
	if opts.CertReloadInterval > 0 {
		certs = certs.WithWatchInterval(opts.CertReloadInterval)
	}
	certs.RegisterCallback(observeServingCertificate)
	// Only its mux and Register are used: Register instruments each route
	// with controller-runtime's webhook metrics.
	webhooks := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: opts.Host, Port: opts.Port, CertDir: opts.CertDir})
	for i, r := range opts.Routes {
		webhooks.Register(r.Path, routes[i])
	}
	return &Server{Server: webhooks, certs: certs, opts: opts, started: make(chan struct{})}, nil
}

// TLSConfig is the server's TLS: 1.2 at least, 1.3 whenever the client
// offers it, the certificate from CertDir as it is now, HTTP/1.1 only. The
// API server keeps connections alive either way, and HTTP/2 exposes the
// server to stream floods (CVE-2023-44487) that the per-request limits
// cannot see.
func (s *Server) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: s.certs.GetCertificate,
		NextProtos:     []string{"http/1.1"},
	}
}

// Start serves until ctx ends, reloading the certificate as it changes,
// then stops accepting connections and lets requests in flight finish.
func (s *Server) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	listener, err := serving.Listen("webhook server", net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port)), s.opts.Limits.MaxConnections, s.TLSConfig())
	if err != nil {
		return err
	}
	watchErr := make(chan error, 1)
	go func() { watchErr <- s.certs.Start(ctx) }()
	srv := serving.NewServer(s.WebhookMux(), s.opts.Log)
	addr := listener.Addr().String()
	s.addr.Store(&addr)
	close(s.started)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(listener) }()

	select {
	case err = <-served: // the listener failed
	case <-ctx.Done():
		shutdown, stop := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
		err = srv.Shutdown(shutdown)
		stop()
		if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
			err = serveErr
		}
	}
	cancel()
	if werr := <-watchErr; err == nil && werr != nil {
		err = fmt.Errorf("webhook: certificate watcher: %w", werr)
	}
	if err != nil {
		return fmt.Errorf("webhook server: %w", err)
	}
	return nil
}

// StartedChecker reports ready once the TLS listener completes a handshake
// with the loaded certificate.
func (s *Server) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		addr := s.addr.Load()
		if addr == nil {
			return errors.New("webhook server has not started yet")
		}
		d := &net.Dialer{Timeout: 10 * time.Second}
		conn, err := tls.DialWithDialer(d, "tcp", *addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only the handshake is checked
		if err != nil {
			return fmt.Errorf("webhook server is not reachable: %w", err)
		}
		return conn.Close()
	}
}

// Started is closed once the server listens.
func (s *Server) Started() <-chan struct{} { return s.started }
