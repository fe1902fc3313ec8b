// Package serving is what every karpgate listener shares: a TCP listener
// capped at a number of open connections overall and per client address,
// which closes the connection idle the longest to make room for a new one
// (so that parked idle connections cannot starve anyone, probes included),
// and an http.Server with bounded header size, header and idle timeouts,
// and server errors logged instead of printed. The webhook server, the
// metrics server and the health probes all listen through it, so a client
// cannot open connections without bound on any of them.
//
// A listener whose TLS configuration verifies client certificates learns
// from each handshake whether the client is verified (handshake.go), and
// never closes a verified connection to make room for an unverified one;
// unverified connections are capped below the listener's size instead
// (conns.go), so a client that reconnects the moment it is closed cannot
// take the API server's keep-alive connections from it.
package serving
