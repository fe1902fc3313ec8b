// Package serving is what every karpgate listener shares: a TCP listener
// capped at a number of open connections (the rest wait in the kernel's
// accept queue instead of costing memory), and an http.Server with bounded
// header size, header and idle timeouts, and server errors logged instead
// of printed. The webhook server, the metrics server and the health probes
// all listen through it, so a client cannot open connections without bound
// on any of them.
package serving
