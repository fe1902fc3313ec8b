package webhook

import (
	"time"
)

// Defaults of Limits, matching `karpgate serve`'s flags.
const (
	DefaultMaxInFlight  = 64
	DefaultMaxBodyBytes = 3 << 20
	// DefaultMaxQueueWait is how long a request waits for a free slot or
	// memory before it is turned away: long enough to ride out a burst,
	// short enough that the API server's retry still fits in its webhook
	// timeout.
	DefaultMaxQueueWait = time.Second
	// DefaultMemoryFactor is what handling one body byte costs at peak when
	// a Route does not say: the body, the decoded review, the decoded
	// objects and the response (BenchmarkReviewMemory measures each route).
	DefaultMemoryFactor = 8
	// DefaultMemoryBudget is the memory that request bodies and what is
	// decoded from them may take at once when `karpgate serve` is given no
	// --memory-limit to derive it from.
	DefaultMemoryBudget = 256 << 20
)

// The pace a body must keep. A request holds what it has been charged for
// its body only while bytes keep coming: its first byte must arrive within
// the grace, and from then on it must have sent at least the minimum rate
// times the time past the grace.
const (
	// DefaultBodyGrace is how long the first bytes of a body may take. The
	// API server writes a review's headers and body in one go (one write
	// for a review of a few KiB), so its bodies arrive with their headers;
	// a second is many times a garbage collection pause or a round trip
	// across zones. A read that misses its due time gets one more look,
	// due a grace later (readBody): a starved server, not the client, may
	// be the late one. A quarter of a second was too little for that: on
	// two cores running the race-detector tests, 2 of 1,117 reviews of
	// the API server missed both looks. A client that announces a body
	// and sends nothing is gone after two graces, a quarter of the 8 s
	// request timeout it could hold before any pace was kept.
	DefaultBodyGrace = time.Second
	// DefaultMinBodyRate: 1 MiB/s, hundreds of times below what the API
	// server sends from the same network. Each byte buys a microsecond:
	// a 5 KiB review is due within 1.005 s, a 3 MiB one within 4 s; to
	// hold a request for the 8 s timeout a client must send 7 MiB, which
	// it is charged for as it arrives.
	DefaultMinBodyRate = 1 << 20
)

// Limits bound what requests may cost the server.
type Limits struct {
	// MaxInFlight caps the requests whose handler runs at once, across the
	// routes that share the server's pool; the rest wait up to
	// MaxQueueWait, then get 429. A request takes its slot once its body
	// has arrived. 0 means DefaultMaxInFlight.
	MaxInFlight int
	// MaxInFlightPerSource caps the requests one client address may have
	// in flight, from its headers to its answer, unless the caller is
	// known (a verified client certificate or a trusted address); more
	// wait up to MaxQueueWait, then get 429. 0 means an eighth of
	// MaxInFlight when the server has trusted addresses, and half of it
	// when it has none, since the API server's conversion requests are
	// then strangers too.
	MaxInFlightPerSource int
	// MaxQueueWait is how long a request may wait for each slot and each
	// charge of memory; 0 means DefaultMaxQueueWait.
	MaxQueueWait time.Duration
	// MaxBodyBytes bounds a request body unless its Route sets its own;
	// larger bodies get 413 before they are read. 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MemoryBudget is shared by every request in flight of the routes
	// without a Budget: a request is charged its route's MemoryFactor for
	// each body byte as the bytes arrive (in chunks that double, so one
	// allocation holds the body), and waits up to MaxQueueWait when the
	// budget is taken, then gets 429. A request that has sent nothing
	// holds nothing. 0 means DefaultMemoryBudget. New refuses a budget too
	// small for one request at a route's body limit.
	MemoryBudget int64
	// Timeout bounds each request: the body must arrive within it, and the
	// handler's context ends with it. Keep it below the webhook's
	// timeoutSeconds, so karpgate answers before the API server gives up
	// and applies the failure policy. 0 means no timeout.
	Timeout time.Duration
	// MaxConnections caps the listener's open connections; 0 means
	// serving.DefaultMaxConnections.
	MaxConnections int
	// BodyGrace is how long the first bytes of a body may take; 0 means
	// DefaultBodyGrace.
	BodyGrace time.Duration
	// MinBodyRate is the slowest a body may arrive after BodyGrace, in
	// bytes a second; 0 means DefaultMinBodyRate. The Timeout bounds it
	// too.
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

func (l Limits) withDefaults(trusted bool) Limits {
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxInFlightPerSource <= 0 {
		l.MaxInFlightPerSource = max(l.MaxInFlight/2, 1)
		if trusted {
			l.MaxInFlightPerSource = max(l.MaxInFlight/8, 1)
		}
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
	if l.BodyGrace <= 0 {
		l.BodyGrace = DefaultBodyGrace
	}
	if l.MinBodyRate <= 0 {
		l.MinBodyRate = DefaultMinBodyRate
	}
	return l
}
