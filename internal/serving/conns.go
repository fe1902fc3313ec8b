package serving

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// ConnLimits bound a listener's open connections.
type ConnLimits struct {
	// Max is how many connections are open at once; 0 means
	// DefaultMaxConnections.
	Max int
	// MaxUnverified is how many of them may lack a verified client
	// certificate (counting those still in their TLS handshake) when the
	// listener verifies client certificates (see Listen); 0 means half of
	// Max, so that the other half is always there for verified clients.
	// Without verification every connection is unverified, and the cap is
	// Max.
	MaxUnverified int
	// PerSource is how many unverified connections one client address may
	// hold; 0 means half of Max without verification and an eighth of it
	// with, so that one client can never take what another needs.
	// Verified connections do not count, nor, with verification, those
	// still in their handshake (MaxUnverified bounds them).
	PerSource int
	// OnClosed, when set, is told each connection the listener closes to
	// make room or refuses, and why: "idle" (an idle connection closed for
	// a new one), "source" (its client address holds PerSource unverified
	// connections, none of them idle), "unverified" (MaxUnverified are
	// open, none of them idle), "full" (Max connections are open, none of
	// them idle).
	OnClosed func(reason string)
}

// connTracker accepts connections within ConnLimits. A connection that
// waits for a free slot in the kernel's accept queue waits for one that
// may be idle for minutes, and a client that parks idle keep-alive
// connections could hold every slot (readiness probes included) that way.
// So Accept never waits: when there is no room, it closes the unverified
// connection idle the longest to make room; when none is idle (every
// connection is in the middle of a request, each bounded by the server's
// timeouts), it closes the new connection at once, which the client sees
// as a reset and retries.
//
// A connection whose client certificate the listener verified (the API
// server's, with --client-ca-file) is never closed to make room for an
// unverified or new one: an attacker that reconnects the moment it is
// closed always holds connections younger than newConnGrace, so the only
// idle connections left to close would be the API server's keep-alive
// ones, between its requests. Unverified connections are capped in total
// and per address instead, below Max, so verified ones always find room.
type connTracker struct {
	net.Listener
	limits ConnLimits
	// verifies: the listener asks for client certificates (handshake.go),
	// so connections become verified or unverified after their handshake.
	verifies bool

	mu   sync.Mutex
	open int
	// unverified counts the connections without a verified certificate,
	// those still in their handshake included.
	unverified int
	// unverifiedBy and verifiedBy count each address's connections whose
	// handshake is done. A connection in its handshake counts toward no
	// address: when karpgate starts, the API server opens dozens at once,
	// before any of them could be known as its own.
	unverifiedBy map[string]int
	verifiedBy   map[string]int
	// idle lists the idle connections, least recently used first.
	idle *list.List
}

// trackedConn is one accepted connection.
type trackedConn struct {
	net.Conn
	t      *connTracker
	source string
	// idle is the connection's element in t.idle while it is idle.
	idle   *list.Element
	closed bool
	// accepted is when the connection was accepted, and served whether a
	// request has begun on it since.
	accepted time.Time
	served   bool
	// settled: its handshake is done (at once without client
	// verification); verified: it verified a client certificate.
	settled, verified bool
	// trusted: it was let in past the unverified caps because its address
	// holds verified connections; its handshake settles whether it stays.
	trusted bool
}

// newConnGrace is how long a new connection may take to send its first
// request before it counts as idle and may be closed to make room: the
// TLS handshake and the headers of a real client take milliseconds, and a
// burst of new connections must not close each other mid-handshake.
const newConnGrace = 2 * time.Second

func newConnTracker(l net.Listener, limits ConnLimits, verifies bool) *connTracker {
	if limits.Max <= 0 {
		limits.Max = DefaultMaxConnections
	}
	if limits.MaxUnverified <= 0 || limits.MaxUnverified > limits.Max {
		limits.MaxUnverified = limits.Max
		if verifies {
			limits.MaxUnverified = max(limits.Max/2, 1)
		}
	}
	if limits.PerSource <= 0 {
		limits.PerSource = max(limits.Max/2, 1)
		if verifies {
			limits.PerSource = max(limits.Max/8, 1)
		}
	}
	return &connTracker{
		Listener: l, limits: limits, verifies: verifies,
		unverifiedBy: map[string]int{}, verifiedBy: map[string]int{}, idle: list.New(),
	}
}

func sourceOf(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// Accept returns the next connection it can make room for.
func (t *connTracker) Accept() (net.Conn, error) {
	for {
		c, err := t.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, t: t, source: sourceOf(c), accepted: time.Now()}
		if reason := t.admit(tc); reason != "" {
			_ = c.Close()
			t.closed(reason)
			continue
		}
		return tc, nil
	}
}

// admit makes room for c, which counts as unverified until its handshake
// says otherwise, or says why it cannot. An address that holds verified
// connections is likely the API server opening another: its new
// connections pass the unverified caps (and Max, by at most PerSource)
// until the handshake settles what they are (settle). An address at its
// share of unverified connections is refused before its handshake, which
// is what costs the CPU.
func (t *connTracker) admit(c *trackedConn) (refused string) {
	var victim *trackedConn
	defer func() { t.evict(victim) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	c.trusted = t.verifiedBy[c.source] > 0
	// A stranger makes room among strangers: the unverified connections
	// of an address that holds verified ones are the API server's
	// conversion requests, which come without a certificate.
	unverifiedOnly := func(o *trackedConn) bool { return !o.verified && (c.trusted || t.verifiedBy[o.source] == 0) }
	switch {
	case !c.trusted && t.unverifiedBy[c.source] >= t.limits.PerSource:
		// With verification, an address at its share keeps the connections
		// it was served on and gets no more: closing one for its own
		// newcomer would let a client that reconnects at once cost a TLS
		// handshake per closing, where a refusal costs an accept. Only one
		// that never sent a request past its grace makes room.
		if victim = t.oldestIdle(func(o *trackedConn) bool {
			return !o.verified && o.source == c.source && (!t.verifies || !o.served)
		}); victim == nil {
			return "source"
		}
	case t.verifies && !c.trusted && t.unverified >= t.limits.MaxUnverified:
		if victim = t.oldestIdle(unverifiedOnly); victim == nil {
			return "unverified"
		}
	case t.open >= t.limits.Max:
		victim = t.oldestIdle(unverifiedOnly)
		if victim == nil && (!c.trusted || t.open >= t.limits.Max+t.limits.PerSource) {
			return "full"
		}
	}
	t.open++
	t.unverified++
	if !t.verifies {
		c.settled = true // no handshake will say more
		t.unverifiedBy[c.source]++
	}
	return ""
}

// settle records c's handshake: verified or not. An unverified one must
// fit its address's share, making room among that address's idle
// unverified connections; a trusted one past Max must make room too: an
// unverified one closes an unverified idle connection, a verified one may
// close a verified idle one. When there is none, settle returns why c is
// refused, and its handshake fails.
func (t *connTracker) settle(c *trackedConn, verified bool) (refused string) {
	var victim *trackedConn
	defer func() { t.evict(victim) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.closed || c.settled {
		return ""
	}
	c.settled, c.verified = true, verified
	if verified {
		t.unverified--
		t.verifiedBy[c.source]++
	} else {
		t.unverifiedBy[c.source]++
	}
	trusted := c.trusted
	c.trusted = false
	switch {
	case !verified && t.unverifiedBy[c.source] > t.limits.PerSource:
		if victim = t.oldestIdle(func(o *trackedConn) bool {
			return !o.verified && o.source == c.source && o != c && (trusted || !o.served)
		}); victim == nil {
			return "source"
		}
	case trusted && t.open > t.limits.Max:
		if victim = t.oldestIdle(func(o *trackedConn) bool { return !o.verified && o != c }); victim == nil && verified {
			victim = t.oldestIdle(func(o *trackedConn) bool { return o != c })
		}
		if victim == nil {
			return "full"
		}
	}
	return ""
}

// oldestIdle takes the least recently used idle connection that matches
// out of the counts (its Close then finds it gone); nil when none. It runs
// with t.mu held.
func (t *connTracker) oldestIdle(match func(*trackedConn) bool) *trackedConn {
	now := time.Now()
	for e := t.idle.Front(); e != nil; e = e.Next() {
		c := e.Value.(*trackedConn)
		if !c.served && now.Sub(c.accepted) < newConnGrace {
			continue
		}
		if match(c) {
			t.forget(c)
			return c
		}
	}
	return nil
}

// evict closes a connection oldestIdle took, outside t.mu.
func (t *connTracker) evict(victim *trackedConn) {
	if victim != nil {
		_ = victim.Close()
		t.closed("idle")
	}
}

// forget takes c out of the counts once; it runs with t.mu held.
func (t *connTracker) forget(c *trackedConn) {
	if c.closed {
		return
	}
	c.closed = true
	if c.idle != nil {
		t.idle.Remove(c.idle)
		c.idle = nil
	}
	t.open--
	switch {
	case c.verified:
		t.countDown(t.verifiedBy, c.source)
	case c.settled:
		t.unverified--
		t.countDown(t.unverifiedBy, c.source)
	default:
		t.unverified--
	}
}

func (t *connTracker) countDown(by map[string]int, source string) {
	if by[source]--; by[source] <= 0 {
		delete(by, source)
	}
}

func (t *connTracker) closed(reason string) {
	if t.limits.OnClosed != nil {
		t.limits.OnClosed(reason)
	}
}

// Open is how many connections are open.
func (t *connTracker) Open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open
}

// Verified is how many open connections presented a verified client
// certificate.
func (t *connTracker) Verified() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open - t.unverified
}

// Idle is how many open connections wait for their next request, having
// served one (a new connection waits in the idle list too, not counted).
func (t *connTracker) Idle() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for e := t.idle.Front(); e != nil; e = e.Next() {
		if e.Value.(*trackedConn).served {
			n++
		}
	}
	return n
}

func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	c.t.forget(c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

// setIdle marks the connection idle (it waits for its next request) or
// busy.
func (c *trackedConn) setIdle(idle bool) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	switch {
	case c.closed:
	case idle && c.idle == nil:
		c.idle = c.t.idle.PushBack(c)
	case !idle && c.idle != nil:
		c.t.idle.Remove(c.idle)
		c.idle = nil
	}
	if !idle {
		c.served = true
	}
}

// trackState is an http.Server's ConnState hook: it tells the tracker
// which connections are idle. A connection is idle from its accept until
// its first request's bytes arrive (but see newConnGrace), and between
// requests.
func trackState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tracked, ok := c.(*trackedConn)
	if !ok {
		return
	}
	switch state {
	case http.StateNew, http.StateIdle:
		tracked.setIdle(true)
	case http.StateActive, http.StateHijacked:
		tracked.setIdle(false)
	}
}
