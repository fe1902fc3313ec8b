package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/semaphore"

	"github.com/karpgate/karpgate/internal/serving"
)

// Defaults of Limits, matching `karpgate serve`'s flags.
const (
	DefaultMaxInFlight  = 64
	DefaultMaxBodyBytes = 3 << 20
	// DefaultMaxQueueWait is how long a request waits for a free slot before
	// it is turned away: long enough to ride out a burst, short enough that
	// the API server's retry still fits in its webhook timeout.
	DefaultMaxQueueWait = time.Second
	// DefaultMemoryFactor is what handling one body byte costs at peak when
	// a Route does not say: the body, the decoded review, the decoded
	// objects and the response (TestMemoryFactorsHold measures each route).
	DefaultMemoryFactor = 8
	// DefaultMemoryBudget is the memory that request bodies and what is
	// decoded from them may take at once when `karpgate serve` is given no
	// --memory-limit to derive it from.
	DefaultMemoryBudget = 256 << 20
)

// Limits bound what requests may cost the server.
type Limits struct {
	// MaxInFlight caps the requests being handled at once, across every
	// route; the rest wait up to MaxQueueWait, then get 429. A request takes
	// its slot before a byte of its body is read. 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// MaxQueueWait is how long a request may wait for a slot and for
	// memory; 0 means DefaultMaxQueueWait.
	MaxQueueWait time.Duration
	// MaxBodyBytes bounds a request body unless its Route sets its own;
	// larger bodies get 413 before they are read. 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MemoryBudget is shared by every request in flight: before its body is
	// read, a request reserves its Content-Length (its route's body limit
	// when it sends none) times its route's MemoryFactor, and waits up to
	// MaxQueueWait for that much to be free, then gets 429. So the memory
	// requests take is bounded whatever clients send, and a few large
	// conversion reviews cannot crowd out the rest for long. 0 means
	// DefaultMemoryBudget. New refuses a budget too small for one request
	// at a route's body limit.
	MemoryBudget int64
	// Timeout bounds each request: the body must arrive within it, and the
	// handler's context ends with it. Keep it below the webhook's
	// timeoutSeconds, so karpgate answers before the API server gives up
	// and applies the failure policy. 0 means no timeout.
	Timeout time.Duration
	// MaxConnections caps the listener's open connections; 0 means
	// serving.DefaultMaxConnections.
	MaxConnections int
	// MinBodyRate is the slowest a body may arrive, in bytes a second,
	// after BodyGrace: a 5 KiB review must arrive within about a second,
	// not hold its slot and memory for the whole Timeout. 0 means
	// DefaultMinBodyRate; the Timeout bounds it too.
	MinBodyRate int64
}

// Budget is a share of the server's capacity that only the routes given it
// use: its own request slots and its own memory, so that those routes and
// the others cannot crowd each other out. Conversion reviews carry whole
// lists and come from the API server's storage path; admission reviews
// carry one object and come from writes.
type Budget struct {
	// MaxInFlight is the requests handled at once on its routes.
	MaxInFlight int
	// Memory is what their bodies and what is decoded from them may take.
	Memory int64
}

// Defaults of the body rate.
const (
	// DefaultMinBodyRate: 1 MiB/s, far below what the API server sends
	// from the same cluster.
	DefaultMinBodyRate = 1 << 20
	// BodyGrace is what any body gets on top of its size at MinBodyRate.
	BodyGrace = time.Second
)

func (l Limits) withDefaults() Limits {
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxQueueWait <= 0 {
		l.MaxQueueWait = DefaultMaxQueueWait
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MemoryBudget <= 0 {
		l.MemoryBudget = DefaultMemoryBudget
	}
	if l.MinBodyRate <= 0 {
		l.MinBodyRate = DefaultMinBodyRate
	}
	return l
}

// limiter applies Limits to every route of one server. The routes without
// a Budget of their own share the server's slots and memory budget,
// because they share the CPU and the heap; each Budget is a pool of its
// own.
type limiter struct {
	limits Limits
	shared *pool
	pools  map[*Budget]*pool
	// requireClientCerts: a client CA is configured, so routes with
	// RequireClientCert refuse requests without a verified certificate.
	requireClientCerts bool
	log                logr.Logger
}

// pool is a set of request slots and a memory budget.
type pool struct {
	slots  chan struct{}
	memory *semaphore.Weighted
	size   int64 // the memory budget
}

func newPool(inFlight int, memory int64) *pool {
	return &pool{slots: make(chan struct{}, inFlight), memory: semaphore.NewWeighted(memory), size: memory}
}

func newLimiter(l Limits, log logr.Logger) *limiter {
	l = l.withDefaults()
	return &limiter{limits: l, shared: newPool(l.MaxInFlight, l.MemoryBudget), pools: map[*Budget]*pool{}, log: log}
}

// routeLimits are one route's body limit and memory factor with the
// server's defaults filled in, and its pool.
type routeLimits struct {
	maxBody    int64
	factor     int64
	perValue   int64
	pool       *pool
	clientCert bool
}

func (l *limiter) forRoute(r Route) (routeLimits, error) {
	rl := routeLimits{maxBody: r.MaxBodyBytes, factor: int64(r.MemoryFactor), perValue: int64(r.MemoryPerValue), pool: l.shared, clientCert: r.RequireClientCert}
	if rl.maxBody <= 0 {
		rl.maxBody = l.limits.MaxBodyBytes
	}
	if rl.factor <= 0 {
		rl.factor = DefaultMemoryFactor
	}
	if b := r.Budget; b != nil {
		if b.MaxInFlight <= 0 || b.Memory <= 0 {
			return rl, fmt.Errorf("webhook: route %s: its budget needs request slots and memory", r.Path)
		}
		if l.pools[b] == nil {
			l.pools[b] = newPool(b.MaxInFlight, b.Memory)
		}
		rl.pool = l.pools[b]
	}
	if need := rl.maxBody * rl.factor; need > rl.pool.size {
		return rl, fmt.Errorf("webhook: route %s: one request at its %s body limit needs %s of memory, more than the %s budget for requests; raise the memory limit (--memory-limit) or lower the body limit",
			r.Path, byteCount(rl.maxBody), byteCount(need), byteCount(rl.pool.size))
	}
	return rl, nil
}

// wrap applies the limits to one route.
func (l *limiter) wrap(path string, rl routeLimits, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer l.recoverPanic(w, r, path)
		// The server cancels request contexts the moment shutdown starts;
		// detaching lets in-flight requests finish within their own
		// timeout while the server drains.
		ctx := context.WithoutCancel(r.Context())
		cancel := context.CancelFunc(func() {})
		if l.limits.Timeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, l.limits.Timeout)
		}
		defer cancel()
		if rl.clientCert && l.requireClientCerts && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			l.reject(w, path, http.StatusUnauthorized, "unauthenticated",
				"this endpoint answers only the API server, which presents a client certificate signed by --client-ca-file")
			return
		}
		if r.ContentLength < 0 {
			// The API server always says how long its reviews are; a body
			// of unknown size would have to reserve the route's whole limit.
			l.reject(w, path, http.StatusLengthRequired, "chunked",
				"a request body without Content-Length (chunked) is refused: say how long the body is")
			return
		}
		// A slow client must not hold a slot and memory past what its body
		// needs at the slowest rate karpgate accepts.
		_ = http.NewResponseController(w).SetReadDeadline(l.bodyDeadline(r.ContentLength))

		// Nothing is read before the request holds a slot and its memory,
		// so clients sending large or unfinished bodies cost at most the
		// budget, however many they are.
		if r.ContentLength > rl.maxBody {
			l.reject(w, path, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf(
				"request body of %d bytes is over the %d-byte limit (--max-request-bytes)", r.ContentLength, rl.maxBody))
			return
		}
		queue, stopQueue := context.WithTimeout(ctx, l.limits.MaxQueueWait)
		defer stopQueue()
		p := rl.pool
		if !p.acquireSlot(queue) {
			l.saturated(w, path, fmt.Sprintf("all %d request slots are busy", cap(p.slots)))
			return
		}
		defer p.releaseSlot()
		reserved := max(r.ContentLength, 1) * rl.factor
		if err := p.memory.Acquire(queue, reserved); err != nil {
			l.saturated(w, path, fmt.Sprintf("the requests in flight hold the memory budget (%s)", byteCount(p.size)))
			return
		}
		defer p.memory.Release(reserved)
		reservedBytes.Add(float64(reserved))
		defer reservedBytes.Sub(float64(reserved))
		stopQueue()

		body, status, err := readBody(r)
		if err != nil {
			reason := map[int]string{http.StatusRequestEntityTooLarge: "too_large", http.StatusRequestTimeout: "timeout"}[status]
			if reason == "" {
				reason = "unreadable"
			}
			l.reject(w, path, status, reason, err.Error())
			return
		}
		if rl.perValue > 0 {
			extra, ok := l.chargeValues(ctx, w, path, rl, reserved, body)
			if !ok {
				return
			}
			defer p.memory.Release(extra)
			reservedBytes.Add(float64(extra))
			defer reservedBytes.Sub(float64(extra))
		}
		inFlight.Inc()
		defer inFlight.Dec()

		r = r.WithContext(ctx)
		r.Body = serving.NewBuffered(body)
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// chargeValues reserves what body's values cost on top of the reserved
// bytes (Route.MemoryPerValue): a body of a million one-byte array
// elements costs its decoder far more than its size says. It answers 413
// when that is more than the whole budget and 429 when the budget stays
// taken for MaxQueueWait, and then says false.
func (l *limiter) chargeValues(ctx context.Context, w http.ResponseWriter, path string, rl routeLimits, reserved int64, body []byte) (int64, bool) {
	values := ValueCount(body)
	extra := values * rl.perValue
	if need := reserved + extra; need > rl.pool.size {
		l.reject(w, path, http.StatusRequestEntityTooLarge, "too_wide", fmt.Sprintf(
			"the request body holds %d JSON values (array elements and object members), which need %s of memory at peak (%d bytes a value on top of %d a byte), more than the %s budget for requests (--memory-limit); send fewer elements",
			values, byteCount(need), rl.perValue, rl.factor, byteCount(rl.pool.size)))
		return 0, false
	}
	queue, stop := context.WithTimeout(ctx, l.limits.MaxQueueWait)
	defer stop()
	if err := rl.pool.memory.Acquire(queue, extra); err != nil {
		l.saturated(w, path, fmt.Sprintf("the requests in flight hold the memory budget (%s)", byteCount(rl.pool.size)))
		return 0, false
	}
	return extra, true
}

// reject answers before the body was read (or after reading it failed).
// The connection closes after the answer: otherwise the server would first
// read the rest of the body, from a client that may never send it.
func (l *limiter) reject(w http.ResponseWriter, path string, code int, reason, msg string) {
	rejectedRequests.WithLabelValues(path, reason).Inc()
	w.Header().Set("Connection", "close")
	writeStatus(w, code, fmt.Sprintf("karpgate %s: %s", path, msg))
}

func (l *limiter) saturated(w http.ResponseWriter, path, what string) {
	w.Header().Set("Retry-After", "1")
	l.reject(w, path, http.StatusTooManyRequests, "saturated", what+"; the API server retries after 1s (raise --max-concurrent-requests or --memory-limit, or add replicas, if this persists)")
}

func (p *pool) acquireSlot(ctx context.Context) bool {
	select {
	case p.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *pool) releaseSlot() { <-p.slots }

// bodyDeadline is when a body of size bytes must have arrived: BodyGrace
// plus its size at MinBodyRate, and never later than the Timeout.
func (l *limiter) bodyDeadline(size int64) time.Time {
	d := BodyGrace + time.Duration(float64(size)/float64(l.limits.MinBodyRate)*float64(time.Second))
	if l.limits.Timeout > 0 {
		d = min(d, l.limits.Timeout)
	}
	return time.Now().Add(d)
}

// recoverPanic turns a handler's panic into a 500 that says where to look,
// and logs the panic and its stack: what the panic says stays in the log.
func (l *limiter) recoverPanic(w http.ResponseWriter, r *http.Request, path string) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler { //nolint:errorlint // the sentinel is compared as net/http does
		panic(p)
	}
	panics.WithLabelValues(path).Inc()
	l.log.Error(fmt.Errorf("panic: %v", p), "a handler panicked; answering 500", "path", path, "remote", r.RemoteAddr, "stack", string(debug.Stack()))
	writeStatus(w, http.StatusInternalServerError, fmt.Sprintf("karpgate %s: internal error while handling the request (the details are in karpgate's log)", path))
}

// readBody reads the whole body, of its declared length, so that a handler
// never sees a truncated review. Errors say what went wrong without the
// socket addresses that net errors carry.
func readBody(r *http.Request) ([]byte, int, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, 0, nil // the handler explains what it expected
	}
	defer r.Body.Close()
	// The size is known, checked against the limit and reserved: one
	// allocation, no doubling.
	body := make([]byte, r.ContentLength)
	_, err := io.ReadFull(r.Body, body)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, errors.New("the request body did not arrive in time: within the request timeout (--request-timeout), and at 1 MiB/s or faster after its first second")
	case err != nil:
		return nil, http.StatusBadRequest, errors.New("the request body ended before its declared length, or the connection failed while reading it")
	}
	return body, 0, nil
}

// byteCount writes n in binary units, as the flags take them.
func byteCount(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
