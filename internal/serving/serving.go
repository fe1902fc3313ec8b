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
	// IdleTimeout closes keep-alive connections nobody uses. The listener
	// closes idle connections to make room for new ones anyway (see
	// ConnLimits); this keeps the count low when nobody needs the room.
	IdleTimeout = 30 * time.Second
	// MaxHeaderBytes bounds request headers; karpgate's clients send a few
	// hundred bytes.
	MaxHeaderBytes = 64 << 10
)

// Listener is a TCP listener held to ConnLimits.
type Listener struct {
	net.Listener
	tracker *connTracker
}

// Open is how many connections the listener holds open.
func (l *Listener) Open() int { return l.tracker.Open() }

// Known is how many of them presented a client certificate the listener's
// TLS configuration verified or came from one of its trusted addresses:
// the ones it never closes to make room for a stranger.
func (l *Listener) Known() int { return l.tracker.Known() }

// Idle is how many of them wait for their next request after serving one:
// the ones the listener closes first to make room.
func (l *Listener) Idle() int { return l.tracker.Idle() }

// Listen binds addr now, so that a taken port stops start-up with a message
// naming the flag, and holds its connections to limits. With tlsConfig it
// speaks TLS; the limits apply before the handshake, so a connection the
// listener has no room for costs nothing. When tlsConfig verifies client
// certificates (ClientCAs, and ClientAuth VerifyClientCertIfGiven or
// stricter), each handshake tells the listener whether the client is
// verified; a connection from one of limits.TrustedSources is known at
// its accept. Known connections are never closed to make room for others
// (ConnLimits.MaxStrangers).
func Listen(what, addr string, limits ConnLimits, tlsConfig *tls.Config) (*Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listening on %s: %w", what, addr, err)
	}
	verifies := verifiesClients(tlsConfig)
	tracker := newConnTracker(l, limits, verifies)
	out := &Listener{Listener: tracker, tracker: tracker}
	if verifies {
		tlsConfig = tracker.withHandshakeHook(tlsConfig)
	}
	if tlsConfig != nil {
		out.Listener = tls.NewListener(tracker, tlsConfig)
	}
	return out, nil
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
		// The listener closes idle connections to make room (ConnLimits).
		ConnState: trackState,
		ErrorLog:  log.New(logWriter{logger.V(1)}, "", 0),
	}
}

type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}
