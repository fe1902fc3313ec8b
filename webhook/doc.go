// Package webhook runs karpgate's HTTPS endpoints for the API server: a
// controller-runtime webhook server (so a manager runs it on every replica
// and drains it last on shutdown, and each route is instrumented) with its
// certificate and key read from a folder and reloaded when they change
// (certwatcher), TLS 1.2 at least and 1.3 when offered, HTTP/1.1 only. It
// listens through package serving, which caps open connections and bounds
// headers, handshakes and idle connections.
//
// # Pools and shares
//
// A pool is a number of handler slots and a memory budget. The routes
// without a Budget share the server's pool (Limits); each Budget is a pool
// of its own (conversion's), so that neither kind of request can take
// what the other needs. A caller is known, and taken for the API server,
// when its connection presented a client certificate the client CA
// signed (Options.ClientCAFile) or its address is one of
// Options.TrustedSources. With trusted sources every pool keeps half its
// slots and half its memory that strangers cannot take, and a stranger's
// address may have an eighth of the server's slots' worth of requests in
// flight (without, half: the API server's conversion requests are then
// strangers too). Known callers are held to neither.
//
// # The limits each request passes
//
// Every route passes the same steps (limitSteps), in this order; a step
// that turns the request away answers a metav1.Status and closes the
// connection:
//
//   - identify the caller: known or a stranger, recorded for the handler
//     (serving.CallerOf);
//   - require a client certificate: with a client CA, routes with
//     RequireClientCert answer 401 to a caller without one, before it
//     takes anything;
//   - check the declared length: a body without Content-Length gets 411,
//     one over the route's limit or larger than the caller's share of
//     memory could hold gets 413;
//   - take a slot of the caller's address: a stranger's address waits up
//     to MaxQueueWait for one of its requests in flight to end, then gets
//     429;
//   - read the body, charging memory as it arrives: nothing is charged or
//     allocated before the first byte; then the body grows in doubling
//     chunks, each charged (its size times the route's MemoryFactor)
//     before it is allocated, waiting up to MaxQueueWait (429). The first
//     byte is due within BodyGrace, the rest at MinBodyRate, all within
//     the Timeout (408): a client that announces a body and sends nothing
//     holds no memory and no slot, and is gone after two graces (a read
//     that misses its due time gets one more look: the server may be the
//     late one);
//   - charge the body's JSON values: MemoryPerValue for each (413 when
//     that is more than the caller's share, 429 when it stays taken);
//   - take a handler slot: one of the route's pool (of a stranger's share
//     of it too), waiting up to MaxQueueWait (429 with Retry-After).
//
// So however many clients send large, slow or unfinished bodies, they hold
// at most the memory they have sent, and strangers at most their share of
// it. The handler then runs on the body read (serving.Buffered), with a
// context detached from the server's, so that a shutdown lets in-flight
// requests finish, and which ends with the Timeout, which stays below the
// webhook's timeoutSeconds. A handler's panic becomes a 500 that points at
// the log, where the panic and its stack go. Rejections are metav1.Status
// bodies, which the API server shows to the user, and say nothing about
// sockets, Go types or panics.
//
// The handlers live in sub-packages: webhook/conversion and
// webhook/admission.
package webhook
