package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// firstChunk is the buffer a body starts in once its first byte has
// arrived: an admission review of a few KiB fits, so it takes one
// allocation and one charge. A larger body doubles it (up to its declared
// length) once a byte past it arrives, each time charged before it is
// allocated, so a request is charged what its buffer holds: at most twice
// what it has sent, and never more than a chunk ahead of it.
const firstChunk = 16 << 10

// nextCapacity is the buffer after one of capacity c, for a body of
// length total.
func nextCapacity(c, total int64) int64 {
	if c == 0 {
		return min(total, firstChunk)
	}
	return min(total, 2*c)
}

// bodyPace is when more of a body must have arrived: BodyGrace for the
// first bytes, then MinBodyRate, and never after the request's own
// deadline. Time spent waiting for memory does not count against the
// client.
type bodyPace struct {
	start    time.Time
	grace    time.Duration
	rate     int64
	waited   time.Duration
	deadline time.Time // the request's; zero: none
}

// due is when the body must have gone past received bytes.
func (p bodyPace) due(received int64) time.Time {
	d := p.start.Add(p.waited + p.grace + time.Duration(float64(received)/float64(p.rate)*float64(time.Second)))
	if !p.deadline.IsZero() && d.After(p.deadline) {
		return p.deadline
	}
	return d
}

// beforeBodyRead runs before each read of a body, given when the read is
// due; tests make the server late with it.
var beforeBodyRead = func(time.Time) {}

// readBody reads the whole body, of its declared length, so that a
// handler never sees a truncated review, charging the route's memory
// factor as the bytes arrive: a client that announces a large body and
// sends nothing holds no memory, and one that sends slowly is cut off at
// the pace (bodyPace). Errors say what went wrong without the socket
// addresses that net errors carry.
func (q *limitedRequest) readBody() *rejection {
	r := q.r
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil // the handler explains what it expected
	}
	// The body is not closed here: closing it would read the rest of one
	// that is turned away, from a client that may never send it. The
	// server closes it, and the connection with it after a refusal
	// (reject).
	pace := bodyPace{start: time.Now(), grace: q.limits.BodyGrace, rate: q.limits.MinBodyRate}
	pace.deadline, _ = q.ctx.Deadline()
	control := http.NewResponseController(q.w)
	await := func(received int64) { _ = control.SetReadDeadline(pace.due(received)) }
	// A chunk is charged and allocated once a byte past the last one has
	// arrived: a body holds at most a chunk more than it has sent, and
	// nothing before its first byte.
	var body []byte
	var past [1]byte
	looked := false
	// lastLook reports whether a read that missed its due time may try
	// once more, due a grace from now. The server, not the client, may be
	// the late one: a process starved of CPU (a busy node, a collection)
	// is woken by bytes that arrived in time, runs only after the
	// deadline, and finds its read expired before it looks at them. The
	// request's context is detached from the connection's, which the
	// failed read cancels, so the request lives on. A client that sends
	// nothing is cut after two graces instead of one.
	lastLook := func(err error) bool {
		if looked || !errors.Is(err, os.ErrDeadlineExceeded) || q.ctx.Err() != nil {
			return false
		}
		looked = true
		pace.waited += time.Since(pace.due(int64(len(body)))) + pace.grace
		await(int64(len(body)))
		return true
	}
	for int64(len(body)) < r.ContentLength {
		await(int64(len(body)))
		beforeBodyRead(pace.due(int64(len(body))))
		if len(body) == cap(body) {
			_, err := io.ReadFull(r.Body, past[:])
			if err != nil && lastLook(err) {
				_, err = io.ReadFull(r.Body, past[:])
			}
			if err != nil {
				return q.unreadable(err)
			}
			var rej *rejection
			if body, rej = q.grow(body, &pace); rej != nil {
				return rej
			}
			body = append(body, past[0])
			continue
		}
		n, err := r.Body.Read(body[len(body):cap(body)])
		if n == 0 && err != nil && lastLook(err) {
			n, err = r.Body.Read(body[len(body):cap(body)])
		}
		body = body[:len(body)+n]
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) && int64(len(body)) == r.ContentLength:
		case errors.Is(err, io.EOF):
			return q.unreadable(io.ErrUnexpectedEOF)
		default:
			return q.unreadable(err)
		}
	}
	q.body = body
	return nil
}

// grow charges the memory of the body's next buffer and moves it there.
// The wait for memory is the server's, not the client's: the pace moves
// by it.
func (q *limitedRequest) grow(body []byte, pace *bodyPace) ([]byte, *rejection) {
	grown := nextCapacity(int64(cap(body)), q.r.ContentLength)
	waitStart := time.Now()
	queue, stop := q.queue()
	ok := q.memory.add(queue, (grown-int64(cap(body)))*q.route.factor)
	stop()
	pace.waited += time.Since(waitStart)
	if !ok {
		return nil, q.memoryTaken()
	}
	next := make([]byte, len(body), grown)
	copy(next, body)
	return next, nil
}

// unreadable says why a body could not be read.
func (q *limitedRequest) unreadable(err error) *rejection {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &rejection{http.StatusRequestTimeout, "timeout", fmt.Sprintf(
			"the request body did not arrive in time: its first bytes are due within %v, the rest at %s/s or faster, all within the request timeout (--request-timeout)",
			q.limits.BodyGrace, byteCount(q.limits.MinBodyRate))}
	}
	return &rejection{http.StatusBadRequest, "unreadable", "the request body ended before its declared length, or the connection failed while reading it"}
}
