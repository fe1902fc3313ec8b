package serving

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Caller is what a server knows of who sent a request: the address it came
// from, whether its connection presented a client certificate the
// configured CA signed, and whether that address is one of the API
// server's (TrustedSources). A known caller is taken for the API server:
// it gets a share of the server's connections and capacity that no
// stranger can take.
type Caller struct {
	// Source is the client's address, IPv4 as IPv4 (not IPv4-in-IPv6).
	Source netip.Addr
	// Verified: its connection presented a certificate the client CA
	// signed.
	Verified bool
	// TrustedSource: Source is in the server's TrustedSources.
	TrustedSource bool
}

// Known reports whether the caller is taken for the API server.
func (c Caller) Known() bool { return c.Verified || c.TrustedSource }

type callerKey struct{}

// WithCaller records who sent a request, for its handler.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf is the caller WithCaller recorded; ok is false when none was,
// which a handler must treat as a stranger.
func CallerOf(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// SourceOf is the address of a "host:port" remote address (a
// net.Conn's RemoteAddr, an http.Request's RemoteAddr); ok is false when
// it holds none.
func SourceOf(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return addr.Unmap().WithZone(""), true
}

// TrustedSources are the address ranges the API server's requests come
// from. Every address in them is taken for the API server, as a verified
// client certificate is: they must hold nothing else that could call the
// webhooks. nil trusts no address.
type TrustedSources []netip.Prefix

// ParseTrustedSources reads CIDRs ("10.0.0.0/28") or single addresses
// ("10.0.0.7", taken as /32 or /128). A range of every address
// ("0.0.0.0/0") is refused: trusting everyone would take the strangers'
// limits off everyone, which is worse than trusting no one.
func ParseTrustedSources(cidrs []string) (TrustedSources, error) {
	var out TrustedSources
	for _, raw := range cidrs {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		var p netip.Prefix
		if strings.Contains(s, "/") {
			var err error
			if p, err = netip.ParsePrefix(s); err != nil {
				return nil, fmt.Errorf("%q is not a CIDR or an address; write it like 10.0.16.0/28 or 10.0.16.7", s)
			}
		} else {
			addr, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR or an address; write it like 10.0.16.0/28 or 10.0.16.7", s)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			// Callers' addresses are compared unmapped (SourceOf).
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		p = p.Masked()
		if p.Bits() == 0 {
			return nil, fmt.Errorf("%q holds every address, so every caller would be trusted as the API server; list the API server's addresses only", s)
		}
		out = append(out, p)
	}
	return out, nil
}

// Contains reports whether addr is in one of the ranges.
func (s TrustedSources) Contains(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range s {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// String lists the ranges as the flag takes them.
func (s TrustedSources) String() string {
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}
