package serving

import (
	"container/list"
	"net"
	"sync"
	"time"
)

// ConnLimits bound a listener's open connections.
type ConnLimits struct {
	// Max is how many connections are open at once; 0 means
	// DefaultMaxConnections.
	Max int
	// MaxStrangers is how many of them may be strangers' (connections
	// neither known by a verified client certificate nor from one of
	// TrustedSources, counting those still in their TLS handshake) when
	// the listener can know clients (see Listen); 0 means half of Max, so
	// that the other half is always there for known clients. When it
	// cannot, every connection is a stranger's, and the cap is Max.
	MaxStrangers int
	// PerSource is how many strangers' connections one client address may
	// hold; 0 means half of Max when the listener cannot know clients and
	// an eighth of it when it can, so that one client can never take what
	// another needs. Known connections do not count, nor, with client
	// verification, those still in their handshake (MaxStrangers bounds
	// them).
	PerSource int
	// TrustedSources are the API server's addresses: a connection from
	// one of them is known from its accept, as one whose certificate the
	// handshake verified is (Caller.TrustedSource).
	TrustedSources TrustedSources
	// OnClosed, when set, is told each connection the listener closes to
	// make room or refuses, and why: "idle" (an idle connection closed for
	// a new one), "source" (its client address holds PerSource strangers'
	// connections, none of them idle), "unverified" (MaxStrangers
	// strangers' connections are open, none of them idle), "full" (Max
	// connections are open, none of them idle).
	OnClosed func(reason string)
}

// connTracker accepts connections within ConnLimits. A connection that
// waits for a free slot in the kernel's accept queue waits for one that
// may be idle for minutes, and a client that parks idle keep-alive
// connections could hold every slot (readiness probes included) that way.
// So Accept never waits: when there is no room, it closes the stranger's
// connection idle the longest to make room; when none is idle (every
// connection is in the middle of a request, each bounded by the server's
// timeouts), it closes the new connection at once, which the client sees
// as a reset and retries.
//
// A known connection (the API server's: its client certificate verified
// with --client-ca-file, or its address trusted with
// --trusted-source-cidrs) is never closed to make room for a stranger's
// or a new one: an attacker that reconnects the moment it is closed
// always holds connections younger than newConnGrace, so the only idle
// connections left to close would be the API server's keep-alive ones,
// between its requests. Strangers' connections are capped in total and
// per address instead, below Max, so known ones always find room.
type connTracker struct {
	net.Listener
	limits ConnLimits
	// verifies: the listener asks for client certificates (handshake.go),
	// so connections become known or strangers' after their handshake.
	verifies bool
	// identifies: some clients can be known, by certificate or address, so
	// strangers are held to their caps.
	identifies bool

	mu   sync.Mutex
	open int
	// strangers counts the connections not known, those still in their
	// handshake included.
	strangers int
	// strangersBy and knownBy count each address's connections whose
	// handshake is done. A connection in its handshake counts toward no
	// address: when karpgate starts, the API server opens dozens at once,
	// before any of them could be known as its own.
	strangersBy map[string]int
	knownBy     map[string]int
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
	// settled: what it is is known (after its handshake, or at once
	// without client verification or from a trusted address); known: it
	// verified a client certificate or came from a trusted address.
	settled, known bool
	// fromTrusted: its address is one of ConnLimits.TrustedSources.
	fromTrusted bool
	// vouched: it was let in past the strangers' caps because its address
	// holds known connections; its handshake settles whether it stays.
	vouched bool
}

// newConnGrace is how long a new connection may take to send its first
// request before it counts as idle and may be closed to make room: the
// TLS handshake and the headers of a real client take milliseconds, and a
// burst of new connections must not close each other mid-handshake.
const newConnGrace = 2 * time.Second

func newConnTracker(l net.Listener, limits ConnLimits, verifies bool) *connTracker {
	identifies := verifies || len(limits.TrustedSources) > 0
	if limits.Max <= 0 {
		limits.Max = DefaultMaxConnections
	}
	if limits.MaxStrangers <= 0 || limits.MaxStrangers > limits.Max {
		limits.MaxStrangers = limits.Max
		if identifies {
			limits.MaxStrangers = max(limits.Max/2, 1)
		}
	}
	if limits.PerSource <= 0 {
		limits.PerSource = max(limits.Max/2, 1)
		if identifies {
			limits.PerSource = max(limits.Max/8, 1)
		}
	}
	return &connTracker{
		Listener: l, limits: limits, verifies: verifies, identifies: identifies,
		strangersBy: map[string]int{}, knownBy: map[string]int{}, idle: list.New(),
	}
}

// sourceOf is c's client address and whether it is a trusted one.
func (t *connTracker) sourceOf(c net.Conn) (source string, trusted bool) {
	addr, ok := SourceOf(c.RemoteAddr().String())
	if !ok {
		return c.RemoteAddr().String(), false
	}
	return addr.String(), t.limits.TrustedSources.Contains(addr)
}

// Accept returns the next connection it can make room for.
func (t *connTracker) Accept() (net.Conn, error) {
	for {
		c, err := t.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, t: t, accepted: time.Now()}
		tc.source, tc.fromTrusted = t.sourceOf(c)
		if reason := t.admit(tc); reason != "" {
			_ = c.Close()
			t.closed(reason)
			continue
		}
		return tc, nil
	}
}

// admit makes room for c, or says why it cannot. A connection from a
// trusted address is known at once; any other counts as a stranger's
// until its handshake says otherwise. An address that holds known
// connections is likely the API server opening another: its new
// connections pass the strangers' caps (and Max, by at most PerSource)
// until the handshake settles what they are (settle). An address at its
// share of strangers' connections is refused before its handshake, which
// is what costs the CPU.
func (t *connTracker) admit(c *trackedConn) (refused string) {
	var victim *trackedConn
	defer func() { t.evict(victim) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.fromTrusted {
		return t.admitKnown(c, &victim)
	}
	c.vouched = t.knownBy[c.source] > 0
	// A stranger makes room among strangers: the strangers' connections
	// of an address that holds known ones are the API server's
	// conversion requests, which come without a certificate.
	strangersOnly := func(o *trackedConn) bool { return !o.known && (c.vouched || t.knownBy[o.source] == 0) }
	switch {
	case !c.vouched && t.strangersBy[c.source] >= t.limits.PerSource:
		// With verification, an address at its share keeps the connections
		// it was served on and gets no more: closing one for its own
		// newcomer would let a client that reconnects at once cost a TLS
		// handshake per closing, where a refusal costs an accept. Only one
		// that never sent a request past its grace makes room.
		if victim = t.oldestIdle(func(o *trackedConn) bool {
			return !o.known && o.source == c.source && (!t.verifies || !o.served)
		}); victim == nil {
			return "source"
		}
	case t.identifies && !c.vouched && t.strangers >= t.limits.MaxStrangers:
		if victim = t.oldestIdle(strangersOnly); victim == nil {
			return "unverified"
		}
	case t.open >= t.limits.Max:
		victim = t.oldestIdle(strangersOnly)
		if victim == nil && (!c.vouched || t.open >= t.limits.Max+t.limits.PerSource) {
			return "full"
		}
	}
	t.open++
	t.strangers++
	if !t.verifies {
		c.settled = true // no handshake will say more
		t.strangersBy[c.source]++
	}
	return ""
}

// admitKnown admits a connection from a trusted address: at Max it closes
// a stranger's idle connection, or else another known one's, as a
// verified newcomer does (settle). It runs with t.mu held.
func (t *connTracker) admitKnown(c *trackedConn, victim **trackedConn) (refused string) {
	if t.open >= t.limits.Max {
		if *victim = t.oldestIdle(func(o *trackedConn) bool { return !o.known }); *victim == nil {
			*victim = t.oldestIdle(func(*trackedConn) bool { return true })
		}
		if *victim == nil {
			return "full"
		}
	}
	t.open++
	c.settled, c.known = true, true
	t.knownBy[c.source]++
	return ""
}

// settle records c's handshake: verified or not. A stranger's must fit
// its address's share, making room among that address's idle strangers'
// connections; a vouched one past Max must make room too: a stranger's
// closes a stranger's idle connection, a verified one may close a known
// idle one. When there is none, settle returns why c is refused, and its
// handshake fails. A connection already known by its address is settled.
func (t *connTracker) settle(c *trackedConn, verified bool) (refused string) {
	var victim *trackedConn
	defer func() { t.evict(victim) }()
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.closed || c.settled {
		return ""
	}
	c.settled, c.known = true, verified
	if verified {
		t.strangers--
		t.knownBy[c.source]++
	} else {
		t.strangersBy[c.source]++
	}
	vouched := c.vouched
	c.vouched = false
	switch {
	case !verified && t.strangersBy[c.source] > t.limits.PerSource:
		if victim = t.oldestIdle(func(o *trackedConn) bool {
			return !o.known && o.source == c.source && o != c && (vouched || !o.served)
		}); victim == nil {
			return "source"
		}
	case vouched && t.open > t.limits.Max:
		if victim = t.oldestIdle(func(o *trackedConn) bool { return !o.known && o != c }); victim == nil && verified {
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
	case c.known:
		t.countDown(t.knownBy, c.source)
	case c.settled:
		t.strangers--
		t.countDown(t.strangersBy, c.source)
	default:
		t.strangers--
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

// Known is how many open connections are known: a verified client
// certificate or a trusted address.
func (t *connTracker) Known() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open - t.strangers
}
