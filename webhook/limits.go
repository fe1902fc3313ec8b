package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of Limits, matching `karpgate serve`'s flags.
const (
	DefaultMaxInFlight  = 64
	DefaultMaxBodyBytes = 3 << 20
	// DefaultMaxQueueWait is how long a request waits for a free slot before
	// it is turned away: long enough to ride out a burst, short enough that
	// the API server's retry still fits in its webhook timeout.
	DefaultMaxQueueWait = time.Second
)

// Limits bound what requests may cost the server.
type Limits struct {
	// MaxInFlight caps the requests being handled at once, across every
	// route; the rest wait up to MaxQueueWait, then get 429. 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// MaxQueueWait is how long a request may wait for a slot; 0 means
	// DefaultMaxQueueWait.
	MaxQueueWait time.Duration
	// MaxBodyBytes bounds a request body unless its Route sets its own;
	// larger bodies get 413. 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Timeout bounds each request: the body must arrive within it, and the
	// handler's context ends with it. Keep it below the webhook's
	// timeoutSeconds, so karpgate answers before the API server gives up
	// and applies the failure policy. 0 means no timeout.
	Timeout time.Duration
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
	return l
}

// limiter applies Limits to every route of one server; its semaphore is
// shared, because the routes share the CPU.
type limiter struct {
	limits Limits
	slots  chan struct{}
}

func newLimiter(l Limits) *limiter {
	l = l.withDefaults()
	return &limiter{limits: l, slots: make(chan struct{}, l.MaxInFlight)}
}

// wrap applies the limits to one route. maxBody overrides MaxBodyBytes when
// positive.
func (l *limiter) wrap(path string, maxBody int64, next http.Handler) http.Handler {
	if maxBody <= 0 {
		maxBody = l.limits.MaxBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server cancels request contexts the moment shutdown starts;
		// detaching lets in-flight requests finish within their own
		// timeout while the server drains.
		ctx := context.WithoutCancel(r.Context())
		cancel := context.CancelFunc(func() {})
		if l.limits.Timeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, l.limits.Timeout)
			// A slow client must not hold a connection past the budget.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(l.limits.Timeout))
		}
		defer cancel()

		body, status, err := readBody(r, maxBody)
		if err != nil {
			rejectedRequests.WithLabelValues(path, rejectReason(status)).Inc()
			writeStatus(w, status, fmt.Sprintf("karpgate %s: %v", path, err))
			return
		}
		if !l.acquire(ctx) {
			rejectedRequests.WithLabelValues(path, "saturated").Inc()
			w.Header().Set("Retry-After", "1")
			writeStatus(w, http.StatusTooManyRequests, fmt.Sprintf(
				"karpgate %s: all %d request slots are busy; the API server retries after 1s (raise --max-concurrent-requests or add replicas if this persists)",
				path, l.limits.MaxInFlight))
			return
		}
		defer l.release()
		inFlight.Inc()
		defer inFlight.Dec()

		r = r.WithContext(ctx)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	wait := time.NewTimer(l.limits.MaxQueueWait)
	defer wait.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-wait.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (l *limiter) release() { <-l.slots }

// readBody reads the whole body, at most limit bytes, so that a handler never
// sees a truncated review and a slot is never held while a client trickles.
func readBody(r *http.Request, limit int64) ([]byte, int, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, 0, nil // the handler explains what it expected
	}
	defer r.Body.Close()
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body of %d bytes is over the %d-byte limit (--max-request-bytes)", r.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err)
	case int64(len(body)) > limit:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body is over the %d-byte limit (--max-request-bytes)", limit)
	}
	return body, 0, nil
}

func rejectReason(status int) string {
	if status == http.StatusRequestEntityTooLarge {
		return "too_large"
	}
	return "unreadable"
}

// writeStatus answers with a metav1.Status, which the API server's client
// decodes, so the message reaches the user instead of a bare status code.
func writeStatus(w http.ResponseWriter, code int, msg string) {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   reasonFor(code),
		Code:     int32(code),
	}
	body, err := json.Marshal(status)
	if err != nil {
		body = []byte(strconv.Quote(msg))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func reasonFor(code int) metav1.StatusReason {
	switch code {
	case http.StatusTooManyRequests:
		return metav1.StatusReasonTooManyRequests
	case http.StatusRequestEntityTooLarge:
		return metav1.StatusReasonRequestEntityTooLarge
	default:
		return metav1.StatusReasonBadRequest
	}
}
