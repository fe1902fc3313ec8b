package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpgate/karpgate/test/wait"
)

// stalledRequest posts a request that declares size bytes, sends sent of
// them, and then sends nothing more until abort is called. The response
// arrives on the returned channel.
func (r *running) stalledRequest(t *testing.T, path string, size, sent int) (resp <-chan result, abort func()) {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, r.base+path, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(size)
	req.Header.Set("Content-Type", "application/json")
	out := make(chan result, 1)
	go func() {
		res, err := r.client.Do(req)
		if err != nil {
			out <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		out <- result{code: res.StatusCode, body: string(b)}
	}()
	go func() { _, _ = pw.Write([]byte(strings.Repeat("x", sent))) }()
	var once sync.Once
	abort = func() { once.Do(func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) }) }
	t.Cleanup(abort)
	return out, abort
}

type result struct {
	code int
	body string
	err  error
}

// TestUnfinishedBodiesHoldAtMostTheMemoryBudget is the attack that grew
// resident memory past the pod's limit: many clients each declaring a large
// body and never finishing it. Only as many as the budget holds get to send
// their bodies; the rest are turned away before a byte is read.
func TestUnfinishedBodiesHoldAtMostTheMemoryBudget(t *testing.T) {
	const size = 1000
	handled := make(chan struct{}, 10)
	r := startServer(t, Limits{MemoryBudget: 2*size*4 + 100, MaxQueueWait: 100 * time.Millisecond, Timeout: time.Minute},
		Route{Path: "/big", MaxBodyBytes: size, MemoryFactor: 4, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handled <- struct{}{}
			echo(w, r)
		})})
	before := testutil.ToFloat64(rejectedRequests.WithLabelValues("/big", "saturated"))

	var aborts []func()
	var holding []<-chan result
	for range 2 {
		resp, abort := r.stalledRequest(t, "/big", size, 10)
		holding, aborts = append(holding, resp), append(aborts, abort)
	}
	wait.For(t, "two stalled requests to reserve their memory", func() bool {
		return testutil.ToFloat64(reservedBytes) == 2*size*4
	})
	// The budget is taken: more stalled clients are answered at once,
	// without their bodies being read.
	for range 3 {
		resp, _ := r.stalledRequest(t, "/big", size, 10)
		got := <-resp
		if got.err != nil || got.code != http.StatusTooManyRequests {
			t.Fatalf("a request beyond the budget got %d %v %s, want 429", got.code, got.err, got.body)
		}
		if s := statusMessage(t, got.body); !strings.Contains(s.Message, "the requests in flight hold the memory budget (8KiB)") {
			t.Fatalf("unhelpful rejection: %s", s.Message)
		}
	}
	if reserved := testutil.ToFloat64(reservedBytes); reserved != 2*size*4 {
		t.Fatalf("reserved memory %v, want the two holders' %d", reserved, 2*size*4)
	}
	if after := testutil.ToFloat64(rejectedRequests.WithLabelValues("/big", "saturated")); after != before+3 {
		t.Fatalf("saturated rejections went %v -> %v, want +3", before, after)
	}
	for i, abort := range aborts {
		abort()
		if got := <-holding[i]; got.err == nil && got.code == http.StatusOK {
			t.Fatalf("an aborted body reached the handler")
		}
	}
	wait.For(t, "the aborted requests to give their memory back", func() bool { return testutil.ToFloat64(reservedBytes) == 0 })
	if resp, body := r.post(t, "/big", strings.NewReader(strings.Repeat("y", size)), size); resp.StatusCode != http.StatusOK || len(body) != size {
		t.Fatalf("a complete request after the stall got %d (%d bytes)", resp.StatusCode, len(body))
	}
	if len(handled) != 1 {
		t.Fatalf("the handler ran %d times, want once (only the complete request)", len(handled))
	}
}

// TestTrickledBodyIsCutAtTheTimeout sends part of a body and then nothing:
// the server answers 408 once the request timeout has passed, without the
// socket addresses the read error carries, and the handler never runs.
func TestTrickledBodyIsCutAtTheTimeout(t *testing.T) {
	const timeout = time.Second
	ran := make(chan struct{}, 1)
	r := startServer(t, Limits{Timeout: timeout}, Route{Path: "/t", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran <- struct{}{}
		echo(w, r)
	})})
	before := testutil.ToFloat64(rejectedRequests.WithLabelValues("/t", "timeout"))
	start := time.Now()
	resp, _ := r.stalledRequest(t, "/t", 100, 10)
	got := <-resp
	if elapsed := time.Since(start); elapsed < timeout {
		t.Fatalf("cut after %v, before the %v timeout", elapsed, timeout)
	}
	if got.err != nil || got.code != http.StatusRequestTimeout {
		t.Fatalf("got %d %v %s, want 408", got.code, got.err, got.body)
	}
	s := statusMessage(t, got.body)
	if !strings.Contains(s.Message, "the request body did not arrive within the request timeout (--request-timeout)") {
		t.Fatalf("message %q", s.Message)
	}
	for _, leak := range []string{"127.0.0.1", "tcp", "i/o timeout"} {
		if strings.Contains(s.Message, leak) {
			t.Fatalf("the message leaks %q: %s", leak, s.Message)
		}
	}
	if len(ran) != 0 {
		t.Fatal("the handler ran on a cut body")
	}
	if after := testutil.ToFloat64(rejectedRequests.WithLabelValues("/t", "timeout")); after != before+1 {
		t.Fatalf("timeout rejections went %v -> %v", before, after)
	}
}

// TestPanicBecomesAnErrorResponse: the client gets a 500 that says where
// to look, not what the panic said; the server keeps serving.
func TestPanicBecomesAnErrorResponse(t *testing.T) {
	r := startServer(t, Limits{}, Route{Path: "/boom", Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret at 10.0.0.7:443 in *conversion.secretType")
	})}, Route{Path: "/ok", Handler: http.HandlerFunc(echo)})
	before := testutil.ToFloat64(panics.WithLabelValues("/boom"))
	resp, body := r.post(t, "/boom", strings.NewReader("{}"), 2)
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	s := statusMessage(t, body)
	if s.Message != "karpgate /boom: internal error while handling the request (the details are in karpgate's log)" {
		t.Fatalf("message %q", s.Message)
	}
	if after := testutil.ToFloat64(panics.WithLabelValues("/boom")); after != before+1 {
		t.Fatalf("karpgate_webhook_panics_total went %v -> %v", before, after)
	}
	if resp, body := r.post(t, "/ok", strings.NewReader("{}"), 2); resp.StatusCode != http.StatusOK || body != "{}" {
		t.Fatalf("after the panic: %d %s", resp.StatusCode, body)
	}
}

// TestConnectionsAreCapped holds the listener's connections: one more
// client cannot even finish its TLS handshake until one is closed.
func TestConnectionsAreCapped(t *testing.T) {
	r := startServer(t, Limits{MaxConnections: 2}, Route{Path: "/a", Handler: http.HandlerFunc(echo)})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(r.ca)
	addr := strings.TrimPrefix(r.base, "https://")
	dial := func(deadline time.Duration) (*tls.Conn, error) {
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return conn, nil
	}
	// The client's idle connection from the readiness wait may hold a slot.
	r.client.CloseIdleConnections()
	var held []*tls.Conn
	for range 2 {
		c, err := dial(30 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// Whatever the machine's load, this handshake cannot complete while
	// both connections are held; the deadline only ends the attempt.
	if c, err := dial(500 * time.Millisecond); err == nil {
		c.Close()
		t.Fatal("a third connection was served while the cap of 2 was reached")
	}
	held[0].Close()
	c, err := dial(30 * time.Second)
	if err != nil {
		t.Fatalf("after one connection closed, a new one was not served: %v", err)
	}
	c.Close()
	held[1].Close()
}
