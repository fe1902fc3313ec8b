// Package webhook runs karpgate's HTTPS endpoints for the API server: a
// controller-runtime webhook server with its certificate and key read from a
// folder and reloaded when they change (certwatcher), TLS 1.2 at least.
//
// Each endpoint is a Route; `karpgate serve` passes the conversion webhook
// at /convert, and admission endpoints join the same list. The handlers
// themselves live in sub-packages (webhook/conversion).
package webhook
