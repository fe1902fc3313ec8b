// Package serving is what every karpgate listener shares: a TCP listener
// capped at a number of open connections overall and per client address,
// which closes the connection idle the longest to make room for a new one
// (so that parked idle connections cannot starve anyone, probes included),
// and an http.Server with bounded header size, header and idle timeouts,
// and server errors logged instead of printed. The webhook server, the
// metrics server and the health probes all listen through it, so a client
// cannot open connections without bound on any of them.
package serving
