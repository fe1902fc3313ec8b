// Package serving is what every karpgate listener shares: a TCP listener
// capped at a number of open connections overall and per client address,
// which closes the connection idle the longest to make room for a new one
// (so that parked idle connections cannot starve anyone, probes included),
// and an http.Server with bounded header size, header and idle timeouts,
// and server errors logged instead of printed. The webhook server, the
// metrics server and the health probes all listen through it, so a client
// cannot open connections without bound on any of them.
//
// A listener knows a client, and takes it for the API server, when its
// TLS configuration verifies client certificates and the handshake
// verified one (handshake.go), or when the client's address is one of the
// trusted sources it was given (caller.go). It never closes a known
// connection to make room for a stranger's; strangers' connections are
// capped below the listener's size instead (conns.go), so a client that
// reconnects the moment it is closed cannot take the API server's
// keep-alive connections from it. Caller carries what the server knows
// of a request's client to its handler.
package serving
