package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/internal/devcluster/loopback"
	"github.com/karpgate/karpgate/test/wait"
)

// running is a started Server with a client trusting its CA.
type running struct {
	base   string
	ca     []byte
	client *http.Client
	cancel context.CancelFunc
	srv    *Server
}

func startServer(t *testing.T, limits Limits, routes ...Route) *running {
	t.Helper()
	dir := t.TempDir()
	bundle := writeCerts(t, dir)
	port := loopback.TestPort(t)
	srv, err := New(Options{CertDir: dir, Host: "127.0.0.1", Port: port, Routes: routes, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	base, stop := serveUntilTestEnds(t, srv, port)
	r := &running{base: base, ca: bundle.CAPEM, client: client(bundle.CAPEM, 0), cancel: stop, srv: srv}
	return r
}

// reply is what a test reads of a response: post reads and closes the
// body itself.
type reply struct {
	StatusCode int
	Header     http.Header
	TLS        *tls.ConnectionState
	Proto      string
}

func (r *running) post(t *testing.T, path string, body io.Reader, contentLength int64) (reply, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = contentLength
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{StatusCode: resp.StatusCode, Header: resp.Header, TLS: resp.TLS, Proto: resp.Proto}, string(b)
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	_, _ = w.Write(b)
}

// statusMessage decodes the metav1.Status the limits answer with.
func statusMessage(t *testing.T, body string) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal([]byte(body), &s); err != nil || s.Kind != "Status" {
		t.Fatalf("want a metav1.Status the API server can decode, got %q (%v)", body, err)
	}
	return s
}

func TestBodyLimit(t *testing.T) {
	r := startServer(t, Limits{MaxBodyBytes: 100},
		Route{Path: "/small", Handler: http.HandlerFunc(echo)},
		Route{Path: "/large", Handler: http.HandlerFunc(echo), MaxBodyBytes: 1000})
	tests := []struct {
		name          string
		path          string
		size          int
		chunked       bool
		wantCode      int
		wantInMessage string
	}{
		{"at the limit", "/small", 100, false, http.StatusOK, ""},
		{"declared too large", "/small", 101, false, http.StatusRequestEntityTooLarge, "request body of 101 bytes is over the 100-byte limit (--max-request-bytes)"},
		{"chunked", "/small", 10, true, http.StatusLengthRequired, "a request body without Content-Length (chunked) is refused"},
		{"route's own limit", "/large", 1000, false, http.StatusOK, ""},
		{"over the route's own limit", "/large", 1001, false, http.StatusRequestEntityTooLarge, "request body of 1001 bytes is over the 1000-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := bytes.Repeat([]byte("x"), tt.size)
			var body io.Reader = bytes.NewReader(payload)
			length := int64(tt.size)
			if tt.chunked {
				body, length = io.MultiReader(body), -1 // unknown length: sent chunked
			}
			reason := "too_large"
			if tt.chunked {
				reason = "chunked"
			}
			before := testutil.ToFloat64(rejectedRequests.WithLabelValues(tt.path, reason))
			resp, got := r.post(t, tt.path, body, length)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantCode, got)
			}
			if tt.wantCode == http.StatusOK {
				if got != string(payload) {
					t.Fatalf("the handler saw %d bytes, want all %d", len(got), len(payload))
				}
				return
			}
			if s := statusMessage(t, got); !strings.Contains(s.Message, tt.wantInMessage) || s.Code != int32(tt.wantCode) {
				t.Fatalf("status %+v, want code %d and a message containing %q", s, tt.wantCode, tt.wantInMessage)
			}
			if after := testutil.ToFloat64(rejectedRequests.WithLabelValues(tt.path, reason)); after != before+1 {
				t.Errorf("karpgate_webhook_rejected_requests_total{reason=%s} went %v -> %v", reason, before, after)
			}
		})
	}
}

func TestSaturatedServerAnswers429WithRetryAfter(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		echo(w, r)
	})
	// One client address may hold both slots here: the test is about the
	// slots, not about an address's share of them (shares_test.go).
	r := startServer(t, Limits{MaxInFlight: 2, MaxInFlightPerSource: 3, MaxQueueWait: 50 * time.Millisecond},
		Route{Path: "/slow", Handler: slow}, Route{Path: "/fast", Handler: http.HandlerFunc(echo)})

	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := r.post(t, "/slow", strings.NewReader("{}"), 2)
			codes[i] = resp.StatusCode
		}()
		<-entered
	}
	// Both slots are taken, by another route: the limit is server-wide.
	resp, body := r.post(t, "/fast", strings.NewReader("{}"), 2)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("status %d Retry-After %q, want 429 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if s := statusMessage(t, body); !strings.Contains(s.Message, "all 2 request slots are busy") || s.Reason != metav1.StatusReasonTooManyRequests {
		t.Fatalf("unhelpful rejection %+v", s)
	}
	close(release)
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Fatalf("requests holding the slots got %v", codes)
	}
	if resp, _ := r.post(t, "/fast", strings.NewReader("{}"), 2); resp.StatusCode != http.StatusOK {
		t.Fatalf("slots were not released: %d", resp.StatusCode)
	}
}

func TestHandlersGetTheRequestTimeout(t *testing.T) {
	deadlines := make(chan time.Time, 1)
	r := startServer(t, Limits{Timeout: 3 * time.Second}, Route{Path: "/t", Handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		deadline, _ := r.Context().Deadline() // zero when there is none
		deadlines <- deadline
	})})
	// The server starts the clock between sending and answering, however
	// long either takes on a busy machine.
	sent := time.Now()
	r.post(t, "/t", strings.NewReader("{}"), 2)
	answered := time.Now()
	deadline := <-deadlines
	if deadline.Before(sent.Add(3*time.Second)) || deadline.After(answered.Add(3*time.Second)) {
		t.Fatalf("handler's deadline %v, want 3s after the request arrived (between %v and %v)",
			deadline, sent.Add(3*time.Second), answered.Add(3*time.Second))
	}
}

// TestShutdownLetsInFlightRequestsFinish stops the server while a request
// is being handled: the handler's context stays alive, the response is
// delivered, and Start returns cleanly.
func TestShutdownLetsInFlightRequestsFinish(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	ctxErr := make(chan error, 1)
	r := startServer(t, Limits{Timeout: 10 * time.Second}, Route{Path: "/slow", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		ctxErr <- r.Context().Err()
		echo(w, r)
	})})
	type result struct {
		code int
		body string
	}
	got := make(chan result, 1)
	go func() {
		resp, body := r.post(t, "/slow", strings.NewReader(`{"in":"flight"}`), 15)
		got <- result{resp.StatusCode, body}
	}()
	<-entered
	r.cancel()
	// Shutdown has begun once the listener refuses new connections; the
	// held request must still be answered after that.
	wait.For(t, "the shutdown to close the listener", func() bool {
		conn, err := net.Dial("tcp", strings.TrimPrefix(r.base, "https://"))
		if err == nil {
			_ = conn.Close()
		}
		return err != nil
	})
	close(release)
	if res := <-got; res.code != http.StatusOK || res.body != `{"in":"flight"}` {
		t.Fatalf("in-flight request got %d %q", res.code, res.body)
	}
	if err := <-ctxErr; err != nil {
		t.Fatalf("the handler's context ended with the shutdown: %v", err)
	}
}

func TestTLSPrefers13AndSpeaksHTTP11(t *testing.T) {
	r := startServer(t, Limits{}, Route{Path: "/a", Handler: http.HandlerFunc(echo)})
	transport := r.client.Transport.(*http.Transport)
	transport.ForceAttemptHTTP2 = true
	resp, _ := r.post(t, "/a", strings.NewReader("{}"), 2)
	if resp.TLS == nil || resp.TLS.Version != tls.VersionTLS13 {
		t.Fatalf("negotiated %v, want TLS 1.3", resp.TLS)
	}
	if resp.Proto != "HTTP/1.1" {
		t.Fatalf("negotiated %s, want HTTP/1.1", resp.Proto)
	}
	r.client = client(r.ca, tls.VersionTLS12)
	if resp, _ := r.post(t, "/a", strings.NewReader("{}"), 2); resp.TLS.Version != tls.VersionTLS12 {
		t.Fatalf("a TLS 1.2 client negotiated %x", resp.TLS.Version)
	}
}
