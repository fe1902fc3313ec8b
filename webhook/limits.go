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
}

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
	return l
}

// limiter applies Limits to every route of one server; its slots and its
// memory budget are shared, because the routes share the CPU and the heap.
type limiter struct {
	limits Limits
	slots  chan struct{}
	memory *semaphore.Weighted
	log    logr.Logger
}

func newLimiter(l Limits, log logr.Logger) *limiter {
	l = l.withDefaults()
	return &limiter{limits: l, slots: make(chan struct{}, l.MaxInFlight), memory: semaphore.NewWeighted(l.MemoryBudget), log: log}
}

// routeLimits are one route's body limit and memory factor with the
// server's defaults filled in.
type routeLimits struct {
	maxBody int64
	factor  int64
}

func (l *limiter) forRoute(r Route) (routeLimits, error) {
	rl := routeLimits{maxBody: r.MaxBodyBytes, factor: int64(r.MemoryFactor)}
	if rl.maxBody <= 0 {
		rl.maxBody = l.limits.MaxBodyBytes
	}
	if rl.factor <= 0 {
		rl.factor = DefaultMemoryFactor
	}
	if need := rl.maxBody * rl.factor; need > l.limits.MemoryBudget {
		return rl, fmt.Errorf("webhook: route %s: one request at its %s body limit needs %s of memory, more than the %s budget for requests; raise the memory limit (--memory-limit) or lower the body limit",
			r.Path, byteCount(rl.maxBody), byteCount(need), byteCount(l.limits.MemoryBudget))
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
			// A slow client must not hold a slot past the budget.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(l.limits.Timeout))
		}
		defer cancel()

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
		if !l.acquireSlot(queue) {
			l.saturated(w, path, fmt.Sprintf("all %d request slots are busy", l.limits.MaxInFlight))
			return
		}
		defer l.releaseSlot()
		size := r.ContentLength
		if size < 0 { // chunked: it may be as large as the limit allows
			size = rl.maxBody
		}
		reserved := max(size, 1) * rl.factor
		if err := l.memory.Acquire(queue, reserved); err != nil {
			l.saturated(w, path, fmt.Sprintf("the requests in flight hold the memory budget (%s)", byteCount(l.limits.MemoryBudget)))
			return
		}
		defer l.memory.Release(reserved)
		reservedBytes.Add(float64(reserved))
		defer reservedBytes.Sub(float64(reserved))
		stopQueue()

		body, status, err := readBody(r, rl.maxBody)
		if err != nil {
			reason := map[int]string{http.StatusRequestEntityTooLarge: "too_large", http.StatusRequestTimeout: "timeout"}[status]
			if reason == "" {
				reason = "unreadable"
			}
			l.reject(w, path, status, reason, err.Error())
			return
		}
		inFlight.Inc()
		defer inFlight.Dec()

		r = r.WithContext(ctx)
		r.Body = serving.NewBuffered(body)
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
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

func (l *limiter) acquireSlot(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *limiter) releaseSlot() { <-l.slots }

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

// readBody reads the whole body, at most limit bytes, so that a handler
// never sees a truncated review. Errors say what went wrong without the
// socket addresses that net errors carry.
func readBody(r *http.Request, limit int64) ([]byte, int, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, 0, nil // the handler explains what it expected
	}
	defer r.Body.Close()
	var (
		body []byte
		err  error
	)
	if r.ContentLength >= 0 {
		// The size is known and reserved: one allocation, no doubling.
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, errors.New("the request body did not arrive within the request timeout (--request-timeout)")
	case err != nil:
		return nil, http.StatusBadRequest, errors.New("the request body ended before its declared length, or the connection failed while reading it")
	case int64(len(body)) > limit:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body is over the %d-byte limit (--max-request-bytes)", limit)
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
