// Package webhook runs karpgate's HTTPS endpoints for the API server: a
// controller-runtime webhook server (so a manager runs it on every replica
// and drains it last on shutdown, and each route is instrumented) with its
// certificate and key read from a folder and reloaded when they change
// (certwatcher), TLS 1.2 at least and 1.3 when offered, HTTP/1.1 only. It
// listens through package serving, which caps open connections and bounds
// headers, handshakes and idle connections.
//
// Every route passes through the same limits, in this order, before a byte
// of the body is read: a body size limit on the declared length (413); one
// pool of slots for the whole server (a request waits briefly for a slot,
// then gets 429 with Retry-After); and one memory budget, from which a
// request reserves its body size times its route's memory factor (429 when
// none frees up in time). So however many clients send large or unfinished
// bodies, they hold at most the budget. The body must then arrive within the
// per-request timeout (408), which also ends the handler's context and stays
// below the webhook's timeoutSeconds. Handlers run on a context detached
// from the server's, so a shutdown lets in-flight requests finish. A
// handler's panic becomes a 500 that points at the log, where the panic and
// its stack go. Rejections are metav1.Status bodies, which the API server
// shows to the user, and say nothing about sockets, Go types or panics.
//
// The handlers live in sub-packages: webhook/conversion and
// webhook/admission.
package webhook
