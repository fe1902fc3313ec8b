package serving

import (
	"crypto/tls"
	"net"
	"net/http"
)

// What the tracker learns of each connection as it is used: idle (from
// its accept until its first request's bytes arrive, and between
// requests: the connections it closes first to make room) or busy, which
// the http.Server tells it through trackState, and closed.

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
