// Package webhook runs karpgate's HTTPS endpoints for the API server: a
// controller-runtime webhook server (so a manager runs it on every replica
// and drains it last on shutdown) with its certificate and key read from a
// folder and reloaded when they change (certwatcher), TLS 1.2 at least and
// 1.3 when offered, HTTP/1.1 only.
//
// Every route passes through the same limits: one semaphore for the whole
// server (a request waits briefly for a slot, then gets 429 with
// Retry-After), a body size limit (413), and a per-request timeout below the
// webhook's timeoutSeconds. Handlers run on a context detached from the
// server's, so a shutdown lets in-flight requests finish. Rejections are
// metav1.Status bodies, which the API server shows to the user.
//
// The handlers live in sub-packages: webhook/conversion and
// webhook/admission.
package webhook
