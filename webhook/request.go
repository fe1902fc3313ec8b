package webhook

import (
	"context"
	"fmt"
	"net/http"

	"github.com/karpgate/karpgate/internal/serving"
)

// limitedRequest is one request on its way through limitSteps.
type limitedRequest struct {
	*limiter
	path  string
	route routeLimits
	w     http.ResponseWriter
	r     *http.Request
	// ctx is the request's own: detached from the server's, ending with
	// Limits.Timeout.
	ctx    context.Context
	caller serving.Caller
	memory *memoryHold
	body   []byte
	// releases give back what the steps took, last first.
	releases []func()
}

// begin starts a request's way through the steps. The server cancels
// request contexts the moment shutdown starts; the request's context is
// detached, so that in-flight requests finish within their own timeout
// while the server drains.
func (l *limiter) begin(path string, rl routeLimits, w http.ResponseWriter, r *http.Request) *limitedRequest {
	ctx := context.WithoutCancel(r.Context())
	cancel := context.CancelFunc(func() {})
	if l.limits.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, l.limits.Timeout)
	}
	req := &limitedRequest{limiter: l, path: path, route: rl, w: w, r: r, ctx: ctx, releases: []func(){cancel}}
	req.memory = &memoryHold{pool: rl.pool}
	req.releases = append(req.releases, req.memory.release)
	return req
}

// end gives back everything the request took.
func (q *limitedRequest) end() {
	for i := len(q.releases) - 1; i >= 0; i-- {
		q.releases[i]()
	}
}

// queue is how long the request may wait for one thing that is taken.
func (q *limitedRequest) queue() (context.Context, context.CancelFunc) {
	return context.WithTimeout(q.ctx, q.limits.MaxQueueWait)
}

// identify says who the caller is: a client certificate the client CA
// verified, or an address among the trusted ones, makes it known (the
// API server); the handler can ask (serving.CallerOf).
func (q *limitedRequest) identify() *rejection {
	addr, _ := serving.SourceOf(q.r.RemoteAddr)
	q.caller = serving.Caller{
		Source:        addr,
		Verified:      q.r.TLS != nil && len(q.r.TLS.VerifiedChains) > 0,
		TrustedSource: q.trusted.Contains(addr),
	}
	q.memory.known = q.caller.Known()
	q.ctx = serving.WithCaller(q.ctx, q.caller)
	return nil
}

// authenticate refuses, on a route that requires it when a client CA is
// configured, a caller without a certificate that CA signed: before the
// request takes anything.
func (q *limitedRequest) authenticate() *rejection {
	if q.route.clientCert && q.requireClientCerts && !q.caller.Verified {
		return &rejection{http.StatusUnauthorized, "unauthenticated",
			"this endpoint answers only the API server, which presents a client certificate signed by --client-ca-file"}
	}
	return nil
}

// checkLength refuses a body of unknown length (the API server always
// says how long its reviews are) and one longer than the route takes, or
// than the caller's share of the memory could ever hold.
func (q *limitedRequest) checkLength() *rejection {
	size := q.r.ContentLength
	switch {
	case size < 0:
		return &rejection{http.StatusLengthRequired, "chunked",
			"a request body without Content-Length (chunked) is refused: say how long the body is"}
	case size > q.route.maxBody:
		return &rejection{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf(
			"request body of %d bytes is over the %d-byte limit (--max-request-bytes)", size, q.route.maxBody)}
	case size*q.route.factor > q.route.pool.memoryFor(q.caller.Known()):
		return &rejection{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf(
			"request body of %d bytes needs %s of memory, more than the %s share of callers that are not the API server (it presents a client certificate signed by --client-ca-file or comes from --trusted-source-cidrs)",
			size, byteCount(size*q.route.factor), byteCount(q.route.pool.memoryFor(false)))}
	}
	return nil
}

// takeSourceSlot holds a caller that is not known to its address's share
// of the requests in flight.
func (q *limitedRequest) takeSourceSlot() *rejection {
	if q.caller.Known() {
		return nil
	}
	queue, stop := q.queue()
	defer stop()
	release, ok := q.sources.take(queue, q.caller.Source)
	if !ok {
		return saturated("source", fmt.Sprintf("this address has %d requests in flight, the most one address may have without a client certificate signed by --client-ca-file or an address in --trusted-source-cidrs", q.sources.per))
	}
	q.releases = append(q.releases, release)
	return nil
}

// takeHandlerSlot waits for a slot of the route's pool (strangers: of
// their share of it too), once the body has arrived: a client that sends
// slowly or not at all holds no slot.
func (q *limitedRequest) takeHandlerSlot() *rejection {
	queue, stop := q.queue()
	defer stop()
	release, ok := q.route.pool.takeSlot(queue, q.caller.Known())
	if !ok {
		return saturated("saturated", fmt.Sprintf("all %d request slots are busy", q.route.pool.slotsFor(q.caller.Known())))
	}
	q.releases = append(q.releases, release)
	return nil
}

// chargeValues charges what the body's values cost on top of its bytes
// (Route.MemoryPerValue): a body of a million one-byte array elements
// costs its decoder far more than its size says. More than the caller's
// whole share is 413; a share that stays taken for MaxQueueWait is 429.
func (q *limitedRequest) chargeValues() *rejection {
	if q.route.perValue <= 0 {
		return nil
	}
	values := ValueCount(q.body)
	extra := values * q.route.perValue
	if need, share := q.memory.held+extra, q.route.pool.memoryFor(q.caller.Known()); need > share {
		return &rejection{http.StatusRequestEntityTooLarge, "too_wide", fmt.Sprintf(
			"the request body holds %d JSON values (array elements and object members), which need %s of memory at peak (%d bytes a value on top of %d a byte), more than the %s budget for requests (--memory-limit); send fewer elements",
			values, byteCount(need), q.route.perValue, q.route.factor, byteCount(share))}
	}
	queue, stop := q.queue()
	defer stop()
	if !q.memory.add(queue, extra) {
		return q.memoryTaken()
	}
	return nil
}

func (q *limitedRequest) memoryTaken() *rejection {
	return saturated("saturated", fmt.Sprintf("the requests in flight hold the memory budget (%s)", byteCount(q.route.pool.memoryFor(q.caller.Known()))))
}

// serve runs the handler on the body read, with the request's context.
func (q *limitedRequest) serve(next http.Handler) {
	inFlight.Inc()
	defer inFlight.Dec()
	r := q.r.WithContext(q.ctx)
	r.Body = serving.NewBuffered(q.body)
	r.ContentLength = int64(len(q.body))
	next.ServeHTTP(q.w, r)
}
