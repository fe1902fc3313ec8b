package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
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
	// MemoryPerValue is what each JSON value of the body (array element or
	// object member) costs at peak on top of MemoryFactor's share of its
	// bytes; it is charged once the body is read. 0 charges bytes only.
	// Decoded JSON costs memory per value as well as per byte, and a
	// body of one-byte elements costs several times what its size says.
	MemoryPerValue int
	// Budget, when set, gives the route slots and memory of its own,
	// shared only with the routes given the same Budget; nil shares the
	// server's (Limits).
	Budget *Budget
	// RequireClientCert: with Options.ClientCAFile, a request must come
	// over a connection whose client certificate that CA signed, or it is
	// refused before it takes anything. The API server presents one to
	// admission webhooks when its AdmissionConfiguration names a
	// kubeconfig with a client certificate; it presents none to
	// conversion webhooks.
	RequireClientCert bool
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
	// ClientCAFile, when set, is the PEM bundle of the CA that signs the
	// API server's client certificate: a client that presents a
	// certificate must present one it signed, routes with
	// RequireClientCert refuse requests without one, and the listener
	// never closes a verified connection to make room for a stranger's.
	ClientCAFile string
	// TrustedSources are the addresses the API server calls from (on EKS,
	// those of the control plane's network interfaces in the VPC). A
	// request from one is known, as one with a verified certificate is:
	// its connections are never closed for strangers', every pool keeps
	// half its slots and memory that strangers cannot take, strangers are
	// held to an eighth of the request slots per address, and handlers
	// can tell (serving.CallerOf; conversion looks NodePools up only for
	// known callers). nil trusts no address: then the API server's
	// conversion requests, which carry no certificate, are strangers like
	// any other.
	TrustedSources serving.TrustedSources
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
	certs     *certwatcher.CertWatcher
	clientCAs *x509.CertPool
	opts      Options
	limits    *limiter
	addr      atomic.Pointer[string]
	listener  atomic.Pointer[serving.Listener]
	// serveErr is set once the listener has stopped serving.
	serveErr atomic.Pointer[error]
	started  chan struct{}
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
	limits := newLimiter(opts.Limits, opts.TrustedSources, opts.Log)
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
	var clientCAs *x509.CertPool
	if opts.ClientCAFile != "" {
		pem, err := os.ReadFile(opts.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("webhook: reading the client CA (--client-ca-file): %w", err)
		}
		clientCAs = x509.NewCertPool()
		if !clientCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("webhook: %s holds no PEM certificate (--client-ca-file)", opts.ClientCAFile)
		}
		limits.requireClientCerts = true
	}
	// Only its mux and Register are used: Register instruments each route
	// with controller-runtime's webhook metrics.
	webhooks := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: opts.Host, Port: opts.Port, CertDir: opts.CertDir})
	for i, r := range opts.Routes {
		webhooks.Register(r.Path, routes[i])
	}
	return &Server{Server: webhooks, certs: certs, clientCAs: clientCAs, opts: opts, limits: limits, started: make(chan struct{})}, nil
}

// TLSConfig is the server's TLS: 1.2 at least, 1.3 whenever the client
// offers it, the certificate from CertDir as it is now, HTTP/1.1 only. The
// API server keeps connections alive either way, and HTTP/2 exposes the
// server to stream floods (CVE-2023-44487) that the per-request limits
// cannot see.
func (s *Server) TLSConfig() *tls.Config {
	c := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: s.certs.GetCertificate,
		NextProtos:     []string{"http/1.1"},
	}
	if s.clientCAs != nil {
		// If given: conversion reviews come without one (see
		// Route.RequireClientCert), and the routes that need one say so.
		c.ClientCAs, c.ClientAuth = s.clientCAs, tls.VerifyClientCertIfGiven
	}
	return c
}

// Start serves until ctx ends, reloading the certificate as it changes,
// then stops accepting connections and lets requests in flight finish.
func (s *Server) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	listener, err := serving.Listen("webhook server", net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port)), serving.ConnLimits{
		Max:            s.opts.Limits.MaxConnections,
		TrustedSources: s.opts.TrustedSources,
		OnClosed:       func(reason string) { closedConnections.WithLabelValues(reason).Inc() },
	}, s.TLSConfig())
	if err != nil {
		return err
	}
	s.listener.Store(listener)
	servingListener.Store(listener)
	watchErr := make(chan error, 1)
	go func() { watchErr <- s.certs.Start(ctx) }()
	srv := serving.NewServer(s.WebhookMux(), s.opts.Log)
	addr := listener.Addr().String()
	s.addr.Store(&addr)
	close(s.started)
	served := make(chan error, 1)
	go func() {
		err := srv.Serve(listener)
		s.serveErr.Store(&err)
		served <- err
	}()

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

// StartedChecker reports ready while the listener serves and the loaded
// certificate completes a TLS handshake. The handshake runs over an
// in-memory pipe with the server's own TLS configuration, not through the
// listener: a probe that had to wait for a connection slot could be made
// to fail by whoever holds the slots, and take the replica out of the
// Service.
func (s *Server) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		if s.addr.Load() == nil {
			return errors.New("webhook server has not started yet")
		}
		if err := s.serveErr.Load(); err != nil {
			return fmt.Errorf("webhook server stopped serving: %w", *err)
		}
		clientSide, serverSide := net.Pipe()
		defer clientSide.Close()
		defer serverSide.Close()
		deadline := time.Now().Add(10 * time.Second)
		_ = clientSide.SetDeadline(deadline)
		_ = serverSide.SetDeadline(deadline)
		config := s.TLSConfig()
		config.ClientAuth = tls.NoClientCert // the probe has no client certificate
		go func() { _ = tls.Server(serverSide, config).Handshake() }()
		//nolint:gosec // only the server's side of the handshake is checked
		if err := tls.Client(clientSide, &tls.Config{InsecureSkipVerify: true}).Handshake(); err != nil {
			return fmt.Errorf("webhook server's certificate does not complete a TLS handshake: %w", err)
		}
		return nil
	}
}

// OpenConnections is how many connections the listener holds open.
func (s *Server) OpenConnections() int {
	if l := s.listener.Load(); l != nil {
		return l.Open()
	}
	return 0
}

// IdleConnections is how many of them wait for their next request. net/http
// marks a connection idle after it has written the response, so a client
// can see its answer before the server counts the connection idle.
func (s *Server) IdleConnections() int {
	if l := s.listener.Load(); l != nil {
		return l.Idle()
	}
	return 0
}

// Started is closed once the server listens.
func (s *Server) Started() <-chan struct{} { return s.started }
