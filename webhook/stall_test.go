package webhook

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
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
	if !strings.Contains(s.Message, "the request body did not arrive in time: within the request timeout (--request-timeout)") {
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

// TestSlowBodyIsCutAtTheMinimumRate: a body that trickles in holds its
// slot and memory for a second plus its size at the minimum rate, not for
// the whole request timeout.
func TestSlowBodyIsCutAtTheMinimumRate(t *testing.T) {
	const timeout = 10 * time.Minute // far beyond what the rate allows
	r := startServer(t, Limits{Timeout: timeout, MinBodyRate: 100}, Route{Path: "/t", Handler: http.HandlerFunc(echo)})
	start := time.Now()
	resp, _ := r.stalledRequest(t, "/t", 100, 10) // a second at 100 B/s, plus BodyGrace
	got := <-resp
	if elapsed := time.Since(start); elapsed < BodyGrace+time.Second {
		t.Fatalf("cut after %v, before the body's due time", elapsed)
	}
	if got.err != nil || got.code != http.StatusRequestTimeout {
		t.Fatalf("got %d %v %s, want 408 long before the %v timeout", got.code, got.err, got.body, timeout)
	}
}

// TestABudgetOfItsOwn: a route with its own Budget and the routes sharing
// the server's cannot take each other's slots.
func TestABudgetOfItsOwn(t *testing.T) {
	own := &Budget{MaxInFlight: 1, Memory: 1 << 20}
	const maxBody = 1000
	// Bodies may trickle for minutes here: the stalled requests hold their slots.
	r := startServer(t, Limits{MaxInFlight: 1, MaxQueueWait: 100 * time.Millisecond, Timeout: time.Hour, MinBodyRate: 1},
		Route{Path: "/own", Handler: http.HandlerFunc(echo), Budget: own, MaxBodyBytes: maxBody},
		Route{Path: "/shared", Handler: http.HandlerFunc(echo)})
	for _, tt := range []struct{ held, other string }{{"/own", "/shared"}, {"/shared", "/own"}} {
		t.Run("holding "+tt.held, func(t *testing.T) {
			holding, abort := r.stalledRequest(t, tt.held, 100, 10)
			defer func() {
				abort()
				<-holding
				wait.For(t, "the held memory to be given back", func() bool { return testutil.ToFloat64(reservedBytes) == 0 })
			}()
			wait.For(t, tt.held+"'s slot to be taken", func() bool { return testutil.ToFloat64(reservedBytes) == 100*DefaultMemoryFactor })
			resp, _ := r.stalledRequest(t, tt.held, 10, 0)
			if got := <-resp; got.code != http.StatusTooManyRequests {
				t.Fatalf("%s while its one slot is taken: %d %v, want 429", tt.held, got.code, got.err)
			}
			if resp, body := r.post(t, tt.other, strings.NewReader("{}"), 2); resp.StatusCode != http.StatusOK || body != "{}" {
				t.Fatalf("%s while %s's slots are taken: %d %s", tt.other, tt.held, resp.StatusCode, body)
			}
		})
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
// client is served by closing the connection idle the longest, so the
// listener never holds more than its cap and a new client never waits.
func TestConnectionsAreCapped(t *testing.T) {
	r := startServer(t, Limits{MaxConnections: 2}, Route{Path: "/a", Handler: http.HandlerFunc(echo)})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(r.ca)
	addr := strings.TrimPrefix(r.base, "https://")
	// Each from an address of its own: with a cap of 2, one address may
	// hold one.
	dial := func(src string) *tls.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		raw, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		t.Cleanup(func() { conn.Close() })
		// One request, then the connection idles, as a keep-alive
		// connection of the API server's does.
		if _, err := io.WriteString(conn, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
			t.Fatalf("from %s: %v", src, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("from %s: %v", src, err)
		}
		resp.Body.Close()
		return conn
	}
	// The client's idle connection from the readiness wait may hold a slot
	// until the server reads its close.
	r.client.CloseIdleConnections()
	wait.For(t, "the readiness wait's connection to be closed on the server", func() bool { return r.srv.OpenConnections() == 0 })
	first, second := dial("127.0.0.2"), dial("127.0.0.3")
	// The server counts a connection idle only after it has written the
	// response the client already read; on a busy machine the third
	// connection came first and made room by closing second, the only
	// idle one then.
	wait.For(t, "both connections to be idle on the server", func() bool { return r.srv.IdleConnections() == 2 })
	before := testutil.ToFloat64(closedConnections.WithLabelValues("idle"))
	dial("127.0.0.4")
	if _, err := first.Read(make([]byte, 1)); err == nil {
		t.Fatal("the oldest idle connection is still open while a third was served under a cap of 2")
	}
	if got := testutil.ToFloat64(closedConnections.WithLabelValues("idle")) - before; got != 1 {
		t.Errorf("karpgate_webhook_closed_connections_total{reason=idle} rose by %v, want 1", got)
	}
	_ = second.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := second.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the second connection was closed too: %v", err)
	}
}
