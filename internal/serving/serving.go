package serving

import (
	"crypto/tls"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/netutil"
)

// Defaults for every listener.
const (
	// DefaultMaxConnections caps the open connections of one listener. The
	// API server keeps a pool of keep-alive connections per webhook; this is
	// well above it, and a connection costs about 40 KiB of buffers.
	DefaultMaxConnections = 256
	// ReadHeaderTimeout bounds the TLS handshake and the request headers:
	// a client that opens a connection and says nothing loses it.
	ReadHeaderTimeout = 10 * time.Second
	// IdleTimeout closes keep-alive connections nobody uses, so that idle
	// clients do not hold the connection cap.
	IdleTimeout = 90 * time.Second
	// MaxHeaderBytes bounds request headers; karpgate's clients send a few
	// hundred bytes.
	MaxHeaderBytes = 64 << 10
)

// Listen binds addr now, so that a taken port stops start-up with a message
// naming the flag, and caps its open connections at maxConns (0:
// DefaultMaxConnections). With tlsConfig it speaks TLS.
func Listen(what, addr string, maxConns int, tlsConfig *tls.Config) (net.Listener, error) {
	if maxConns <= 0 {
		maxConns = DefaultMaxConnections
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listening on %s: %w", what, addr, err)
	}
	// The cap comes before TLS: a connection waiting for a slot costs
	// nothing, not even a handshake.
	l = netutil.LimitListener(l, maxConns)
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
	}
	return l, nil
}

// NewServer is an http.Server with karpgate's bounds around handler.
// Errors the server itself meets (failed handshakes, mostly probes and
// port scanners) go to log at verbosity 1 instead of stderr.
func NewServer(handler http.Handler, logger logr.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          log.New(logWriter{logger.V(1)}, "", 0),
	}
}

type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}
