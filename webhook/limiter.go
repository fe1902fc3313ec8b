package webhook

import (
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/go-logr/logr"

	"github.com/karpgate/karpgate/internal/serving"
)

// limiter applies Limits to every route of one server. The routes without
// a Budget of their own share the server's pool of slots and memory,
// because they share the CPU and the heap; each Budget is a pool of its
// own.
type limiter struct {
	limits Limits
	shared *pool
	pools  map[*Budget]*pool
	// sources hold each stranger's address to its requests in flight.
	sources *sourceCaps
	// requireClientCerts: a client CA is configured, so routes with
	// RequireClientCert refuse requests without a verified certificate.
	requireClientCerts bool
	// trusted are the API server's addresses; with some, every pool keeps
	// a share that strangers cannot take.
	trusted serving.TrustedSources
	log     logr.Logger
}

func newLimiter(l Limits, trusted serving.TrustedSources, log logr.Logger) *limiter {
	l = l.withDefaults(len(trusted) > 0)
	return &limiter{
		limits: l, shared: newPool(l.MaxInFlight, l.MemoryBudget, len(trusted) > 0), pools: map[*Budget]*pool{},
		sources: newSourceCaps(l.MaxInFlightPerSource), trusted: trusted, log: log,
	}
}

// routeLimits are one route's body limit and memory factors with the
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
			l.pools[b] = newPool(b.MaxInFlight, b.Memory, len(l.trusted) > 0)
		}
		rl.pool = l.pools[b]
	}
	if need, budget := rl.maxBody*rl.factor, rl.pool.memoryFor(true); need > budget {
		return rl, fmt.Errorf("webhook: route %s: one request at its %s body limit needs %s of memory, more than the %s budget for requests; raise the memory limit (--memory-limit) or lower the body limit",
			r.Path, byteCount(rl.maxBody), byteCount(need), byteCount(budget))
	}
	return rl, nil
}

// limitSteps are what a request passes, in order, before its handler runs
// (the package doc walks through them). Each step either lets the request
// on or says why it is turned away; what a step takes (a slot, memory) is
// given back when the request ends.
var limitSteps = []struct {
	name string
	run  func(*limitedRequest) *rejection
}{
	{"identify the caller", (*limitedRequest).identify},
	{"require a client certificate", (*limitedRequest).authenticate},
	{"check the declared length", (*limitedRequest).checkLength},
	{"take a slot of the caller's address", (*limitedRequest).takeSourceSlot},
	{"read the body, charging memory as it arrives", (*limitedRequest).readBody},
	{"charge the body's JSON values", (*limitedRequest).chargeValues},
	{"take a handler slot", (*limitedRequest).takeHandlerSlot},
}

// wrap applies the limits to one route.
func (l *limiter) wrap(path string, rl routeLimits, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer l.recoverPanic(w, r, path)
		req := l.begin(path, rl, w, r)
		defer req.end()
		for _, step := range limitSteps {
			if rej := step.run(req); rej != nil {
				l.reject(w, path, rej)
				return
			}
		}
		req.serve(next)
	})
}

// rejection is why a request is turned away before its handler runs.
type rejection struct {
	code int
	// reason labels karpgate_webhook_rejected_requests_total.
	reason string
	msg    string
}

// saturated turns a request away because what it waited for stayed taken:
// 429, which the API server retries.
func saturated(reason, what string) *rejection {
	return &rejection{http.StatusTooManyRequests, reason, what + "; the API server retries after 1s (raise --max-concurrent-requests or --memory-limit, or add replicas, if this persists)"}
}

// reject answers before the handler ran. The connection closes after the
// answer: otherwise the server would first read the rest of the body,
// from a client that may never send it.
func (l *limiter) reject(w http.ResponseWriter, path string, rej *rejection) {
	rejectedRequests.WithLabelValues(path, rej.reason).Inc()
	if rej.code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Connection", "close")
	writeStatus(w, rej.code, fmt.Sprintf("karpgate %s: %s", path, rej.msg))
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
