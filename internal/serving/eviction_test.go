package serving

import (
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// fakeConn is an accepted connection from an address; it records its
// Close.
type fakeConn struct {
	net.Conn
	addr   net.Addr
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.addr }
func (c *fakeConn) Close() error         { c.closed = true; return nil }

// connSpec is a connection the listener holds before the newcomer comes.
type connSpec struct {
	name, source string
	verified     bool
	// busy, idle (served a request), new (in its handshake), stale (in
	// its handshake past newConnGrace), silent (its handshake done, no
	// request, past newConnGrace).
	state string
}

// TestEvictionOrder drives the tracker directly, so that "past its grace"
// is set, not waited for: each case holds some connections, then a new
// one arrives from an address and its handshake says whether it is
// verified, and the case names what was closed or refused.
func TestEvictionOrder(t *testing.T) {
	verified, unverified := true, false
	for _, tt := range []struct {
		name     string
		limits   ConnLimits
		verifies bool
		// trusted are the addresses (letters) of ConnLimits.TrustedSources.
		trusted string
		held    []connSpec
		from    string
		// handshake is what the newcomer's handshake verified; nil: no
		// handshake (a listener without client verification).
		handshake *bool
		// settleFirst are held connections, still in their handshake,
		// whose handshake ends unverified after the newcomer's accept and
		// before its own handshake ends.
		settleFirst []string
		refused     string
		closed      []string
	}{{
		name:   "the oldest unverified idle connection makes room; an older verified one is spared",
		limits: ConnLimits{Max: 3, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api", "A", true, "idle"}, {"b", "B", false, "idle"}, {"c", "C", false, "idle"}},
		from: "D", handshake: &unverified, closed: []string{"b"},
	}, {
		name:   "strangers within their grace are spared, and the newcomer is refused",
		limits: ConnLimits{Max: 3, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api", "A", true, "idle"}, {"b", "B", false, "new"}, {"c", "C", false, "new"}},
		from: "D", refused: "unverified",
	}, {
		name:   "a stranger that said nothing past its grace makes room",
		limits: ConnLimits{Max: 3, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api", "A", true, "idle"}, {"b", "B", false, "new"}, {"c", "C", false, "stale"}},
		from: "D", handshake: &verified, closed: []string{"c"},
	}, {
		name:   "an address at its share keeps the connections it was served on and gets no more",
		limits: ConnLimits{Max: 8, MaxStrangers: 4, PerSource: 2}, verifies: true,
		held: []connSpec{{"b1", "B", false, "idle"}, {"c", "C", false, "idle"}, {"b2", "B", false, "idle"}},
		from: "B", refused: "source",
	}, {
		name:   "an address at its share gives up its own that said nothing past its grace",
		limits: ConnLimits{Max: 8, MaxStrangers: 4, PerSource: 2}, verifies: true,
		held: []connSpec{{"b1", "B", false, "idle"}, {"c", "C", false, "idle"}, {"b2", "B", false, "silent"}},
		from: "B", handshake: &unverified, closed: []string{"b2"},
	}, {
		name:   "without client verification, an address at its share gives up its own oldest idle connection",
		limits: ConnLimits{Max: 8, PerSource: 2},
		held:   []connSpec{{"b1", "B", false, "idle"}, {"c", "C", false, "idle"}, {"b2", "B", false, "idle"}},
		from:   "B", closed: []string{"b1"},
	}, {
		name:   "a burst from one address before any handshake is not held to its share",
		limits: ConnLimits{Max: 8, MaxStrangers: 4, PerSource: 1}, verifies: true,
		held: []connSpec{{"a1", "A", false, "new"}, {"a2", "A", false, "new"}},
		from: "A", handshake: &verified,
	}, {
		name:   "a burst from one address that turns out unverified is held to its share at the handshake",
		limits: ConnLimits{Max: 8, MaxStrangers: 4, PerSource: 1}, verifies: true,
		held: []connSpec{{"b1", "B", false, "new"}},
		from: "B", handshake: &unverified, settleFirst: []string{"b1"}, refused: "source",
	}, {
		name:   "an address at its share with none idle is refused",
		limits: ConnLimits{Max: 8, MaxStrangers: 4, PerSource: 2}, verifies: true,
		held: []connSpec{{"b1", "B", false, "busy"}, {"b2", "B", false, "busy"}, {"c", "C", false, "idle"}},
		from: "B", refused: "source",
	}, {
		name:   "at Max an unverified idle connection makes room, never a verified one",
		limits: ConnLimits{Max: 3, MaxStrangers: 3, PerSource: 3}, verifies: true,
		held: []connSpec{{"api1", "A", true, "idle"}, {"api2", "A", true, "idle"}, {"b", "B", false, "idle"}},
		from: "C", handshake: &unverified, closed: []string{"b"},
	}, {
		name:   "at Max, all verified and idle: a stranger is refused",
		limits: ConnLimits{Max: 2, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api1", "A", true, "idle"}, {"api2", "A", true, "idle"}},
		from: "C", refused: "full",
	}, {
		name:   "at Max, all verified and idle: another verified one closes the oldest",
		limits: ConnLimits{Max: 2, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api1", "A", true, "idle"}, {"api2", "A", true, "idle"}},
		from: "A", handshake: &verified, closed: []string{"api1"},
	}, {
		name:   "at Max, all verified and idle: an unverified one from their address is refused at its handshake",
		limits: ConnLimits{Max: 2, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api1", "A", true, "idle"}, {"api2", "A", true, "idle"}},
		from: "A", handshake: &unverified, refused: "full",
	}, {
		name:   "the API server's address passes the strangers' total (conversion comes without a certificate)",
		limits: ConnLimits{Max: 8, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api", "A", true, "busy"}, {"b", "B", false, "busy"}, {"c", "C", false, "busy"}},
		from: "A", handshake: &unverified,
	}, {
		name:   "at the strangers' cap, a stranger spares the API server's address's unverified connections",
		limits: ConnLimits{Max: 8, MaxStrangers: 2, PerSource: 2}, verifies: true,
		held: []connSpec{{"api", "A", true, "busy"}, {"conv", "A", false, "idle"}, {"b", "B", false, "idle"}},
		from: "C", handshake: &unverified, closed: []string{"b"},
	}, {
		name:   "but not its own share of unverified connections",
		limits: ConnLimits{Max: 8, MaxStrangers: 4, PerSource: 2}, verifies: true,
		held: []connSpec{{"api", "A", true, "busy"}, {"conv1", "A", false, "busy"}, {"conv2", "A", false, "busy"}},
		from: "A", handshake: &unverified, refused: "source",
	}, {
		name:   "a verified connection does not count toward its address's share",
		limits: ConnLimits{Max: 8, MaxStrangers: 4, PerSource: 1}, verifies: true,
		held: []connSpec{{"api1", "A", true, "busy"}, {"api2", "A", true, "busy"}, {"api3", "A", true, "busy"}},
		from: "A", handshake: &verified,
	}, {
		name:   "without client verification, the oldest idle connection makes room, as before",
		limits: ConnLimits{Max: 3, PerSource: 2},
		held:   []connSpec{{"b", "B", false, "idle"}, {"c", "C", false, "idle"}, {"d", "D", false, "idle"}},
		from:   "E", closed: []string{"b"},
	}, {
		name:   "without client verification, a listener full of busy connections refuses as full",
		limits: ConnLimits{Max: 2, PerSource: 2},
		held:   []connSpec{{"b", "B", false, "busy"}, {"c", "C", false, "busy"}},
		from:   "D", refused: "full",
	}, {
		name:   "without client verification, strangers may hold every slot",
		limits: ConnLimits{Max: 3, PerSource: 2},
		held:   []connSpec{{"b", "B", false, "busy"}, {"c", "C", false, "busy"}},
		from:   "D",
	}, {
		name:   "a trusted address's connection is known from its accept: a stranger closes another stranger's",
		limits: ConnLimits{Max: 3, MaxStrangers: 3, PerSource: 3}, trusted: "A",
		held: []connSpec{{"api", "A", false, "idle"}, {"b", "B", false, "idle"}, {"c", "C", false, "idle"}},
		from: "D", closed: []string{"b"},
	}, {
		name:   "with trusted addresses and no verification, strangers are held to their total",
		limits: ConnLimits{Max: 8, MaxStrangers: 2, PerSource: 2}, trusted: "A",
		held: []connSpec{{"api", "A", false, "busy"}, {"b", "B", false, "busy"}, {"c", "C", false, "busy"}},
		from: "D", refused: "unverified",
	}, {
		name:   "with trusted addresses, strangers make room among themselves at their total",
		limits: ConnLimits{Max: 8, MaxStrangers: 2, PerSource: 2}, trusted: "A",
		held: []connSpec{{"api", "A", false, "idle"}, {"b", "B", false, "idle"}, {"c", "C", false, "busy"}},
		from: "D", closed: []string{"b"},
	}, {
		name:   "a trusted address passes the strangers' total and its per-address share",
		limits: ConnLimits{Max: 8, MaxStrangers: 2, PerSource: 1}, trusted: "A",
		held: []connSpec{{"api1", "A", false, "busy"}, {"b", "B", false, "busy"}, {"c", "C", false, "busy"}},
		from: "A",
	}, {
		name:   "at Max a trusted newcomer closes a stranger's idle connection, not a known one",
		limits: ConnLimits{Max: 3, MaxStrangers: 3, PerSource: 3}, trusted: "A",
		held: []connSpec{{"api", "A", false, "idle"}, {"b", "B", false, "idle"}, {"c", "C", false, "busy"}},
		from: "A", closed: []string{"b"},
	}, {
		name:   "at Max with only known connections idle, a trusted newcomer closes the oldest",
		limits: ConnLimits{Max: 2, MaxStrangers: 2, PerSource: 2}, trusted: "A",
		held: []connSpec{{"api1", "A", false, "idle"}, {"b", "B", false, "busy"}},
		from: "A", closed: []string{"api1"},
	}, {
		name:   "at Max with every connection busy, a trusted newcomer is refused",
		limits: ConnLimits{Max: 2, MaxStrangers: 2, PerSource: 2}, trusted: "A",
		held: []connSpec{{"api1", "A", false, "busy"}, {"b", "B", false, "busy"}},
		from: "A", refused: "full",
	}, {
		name:   "with verification too, a trusted address needs no certificate",
		limits: ConnLimits{Max: 3, MaxStrangers: 2, PerSource: 2}, verifies: true, trusted: "A",
		held: []connSpec{{"api", "A", false, "idle"}, {"b", "B", false, "idle"}, {"c", "C", false, "idle"}},
		from: "D", handshake: &unverified, closed: []string{"b"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			for _, letter := range tt.trusted {
				tt.limits.TrustedSources = append(tt.limits.TrustedSources, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(letter)}), 32))
			}
			tr := newConnTracker(nil, tt.limits, tt.verifies)
			conns := map[string]*fakeConn{}
			tracked := map[string]*trackedConn{}
			connect := func(source string, accepted time.Time) (*trackedConn, *fakeConn) {
				fake := &fakeConn{addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, source[0]), Port: 1000 + len(conns)}}
				tc := &trackedConn{Conn: fake, t: tr, source: source, accepted: accepted}
				_, tc.fromTrusted = tr.sourceOf(fake) // as Accept does; the letter stays the source
				return tc, fake
			}
			for _, h := range tt.held {
				accepted := time.Now()
				if h.state == "stale" || h.state == "silent" {
					accepted = accepted.Add(-newConnGrace - time.Second)
				}
				tc, fake := connect(h.source, accepted)
				if reason := tr.admit(tc); reason != "" {
					t.Fatalf("setting up %s: refused (%s)", h.name, reason)
				}
				if tt.verifies && !tc.known && (h.verified || h.state == "idle" || h.state == "busy" || h.state == "silent") {
					if reason := tr.settle(tc, h.verified); reason != "" {
						t.Fatalf("setting up %s: refused at its handshake (%s)", h.name, reason)
					}
				}
				switch h.state {
				case "busy":
					tc.setIdle(false)
				case "idle":
					tc.setIdle(false)
					tc.setIdle(true)
				default:
					tc.setIdle(true)
				}
				conns[h.name], tracked[h.name] = fake, tc
			}

			tc, _ := connect(tt.from, time.Now())
			refused := tr.admit(tc)
			for _, name := range tt.settleFirst {
				if reason := tr.settle(tracked[name], false); reason != "" {
					t.Fatalf("%s refused at its handshake (%s)", name, reason)
				}
			}
			if refused == "" && tt.handshake != nil {
				refused = tr.settle(tc, *tt.handshake)
				if refused != "" {
					_ = tc.Close() // as the failed handshake does
				}
			}
			if refused != tt.refused {
				t.Errorf("newcomer from %s: refused %q, want %q", tt.from, refused, tt.refused)
			}
			var closed []string
			for name, c := range conns {
				if c.closed {
					closed = append(closed, name)
				}
			}
			slices.Sort(closed)
			if !slices.Equal(closed, tt.closed) {
				t.Errorf("closed %v, want %v", closed, tt.closed)
			}
			wantOpen := len(tt.held) - len(tt.closed)
			if refused == "" {
				wantOpen++
			}
			if tr.Open() != wantOpen {
				t.Errorf("%d connections counted open, want %d", tr.Open(), wantOpen)
			}
			if tr.Open() > tr.limits.Max {
				t.Errorf("%d connections open, above Max %d", tr.Open(), tr.limits.Max)
			}
		})
	}
}
