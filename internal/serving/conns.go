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
	// PerSource is how many of them one client address may hold; 0 means
	// half of Max, so that one client can never take what another needs.
	PerSource int
	// OnClosed, when set, is told each connection the listener closes to
	// make room, and why: "idle" (the oldest idle connection, for a new
	// one), "source" (its client address holds PerSource connections, none
	// of them idle), "full" (Max connections are open, none of them idle).
	OnClosed func(reason string)
}

// connTracker accepts connections within ConnLimits. A connection that
// waits for a free slot in the kernel's accept queue waits for one that
// may be idle for minutes, and a client that parks idle keep-alive
// connections could hold every slot (readiness probes included) that way.
// So Accept never waits: when the listener is full, it closes the idle
// connection unused the longest to make room; when none is idle (every
// connection is in the middle of a request, each bounded by the server's
// timeouts), it closes the new connection at once, which the client sees
// as a reset and retries. A client address past PerSource gives up its
// own oldest idle connection the same way, or the new one.
type connTracker struct {
	net.Listener
	limits ConnLimits

	mu       sync.Mutex
	open     int
	bySource map[string]int
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
}

// newConnGrace is how long a new connection may take to send its first
// request before it counts as idle and may be closed to make room: the
// TLS handshake and the headers of a real client take milliseconds, and a
// burst of new connections must not close each other mid-handshake.
const newConnGrace = 2 * time.Second

func newConnTracker(l net.Listener, limits ConnLimits) *connTracker {
	if limits.Max <= 0 {
		limits.Max = DefaultMaxConnections
	}
	if limits.PerSource <= 0 {
		limits.PerSource = max(limits.Max/2, 1)
	}
	return &connTracker{Listener: l, limits: limits, bySource: map[string]int{}, idle: list.New()}
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

// admit makes room for c, closing idle connections, or says why it cannot.
func (t *connTracker) admit(c *trackedConn) (refused string) {
	var evict []*trackedConn
	defer func() {
		for _, e := range evict {
			_ = e.Close()
			t.closed("idle")
		}
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bySource[c.source] >= t.limits.PerSource {
		victim := t.oldestIdle(func(o *trackedConn) bool { return o.source == c.source })
		if victim == nil {
			return "source"
		}
		evict = append(evict, victim)
	} else if t.open >= t.limits.Max {
		victim := t.oldestIdle(func(*trackedConn) bool { return true })
		if victim == nil {
			return "full"
		}
		evict = append(evict, victim)
	}
	t.open++
	t.bySource[c.source]++
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
	if t.bySource[c.source]--; t.bySource[c.source] <= 0 {
		delete(t.bySource, c.source)
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
