package admission

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/webhook"
)

// The attacks BenchmarkLoadUnderAttack runs beside the legitimate clients,
// each the one a test proves refused on its own (webhook/connections_test.go,
// test/e2e/attack_test.go, test/e2e/slow_senders_test.go,
// webhook/stall_test.go, webhook/shares_test.go), here all at once and for
// the whole measured window. The connection and body attacks come from
// strangers without the API server's client certificate, from three
// loopback addresses other than the API server's, since the listener and
// the limits count per address; the payload attacks come through the API
// server (its certificate, or its address), because that is how a hostile
// object reaches /validate and /mutate.

// outcomes counts what an attacker's attempts came to: "status-<code>"
// (an answer), "error" (the connection failed or was reset before one),
// and for the connection attacks "refused" (the connection was closed
// before its handshake finished), "parked-then-closed" (held until the
// server closed it) or "closed-before-answer".
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) add(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[outcome]++
}

// total is how many attempts have ended.
func (o *outcomes) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, v := range o.n {
		n += v
	}
	return n
}

func (o *outcomes) snapshot() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for k, v := range o.n {
		out[k] = v
	}
	return out
}

// turnedAway is how many of the parking attackers' connections the
// server has refused or closed so far.
func (a *attackers) turnedAway() int {
	n := 0
	for _, name := range []string{"parked", "fresh"} {
		if o := a.results[name]; o != nil {
			got := o.snapshot()
			n += got["refused"] + got["parked-then-closed"] + got["closed-before-answer"]
		}
	}
	return n
}

// attackSources are the addresses the strangers connect from.
var attackSources = []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}

// attack is one kind of attacker: how many run at once and what one
// attempt does. An attempt returns its outcome.
type attack struct {
	name    string
	workers int
	attempt func(ctx context.Context, worker int) string
}

// attackers run every attack until stop, each worker repeating its
// attempt. An attempt that ends at once (a refusal) is followed by a pause
// of pace, so the refused attacks keep the server busy without turning the
// benchmark into a measure of how fast the client loops.
type attackers struct {
	results map[string]*outcomes
	parked  atomic.Int64 // connections held open right now
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

const pace = 20 * time.Millisecond

func newAttackers() *attackers { return &attackers{results: map[string]*outcomes{}} }

func (a *attackers) start(attacks []attack) {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	for _, at := range attacks {
		o := &outcomes{}
		a.results[at.name] = o
		for w := range at.workers {
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				for ctx.Err() == nil {
					t0 := time.Now()
					outcome := at.attempt(ctx, w)
					if ctx.Err() != nil {
						return // the attack was stopped, not answered
					}
					o.add(outcome)
					if time.Since(t0) < pace {
						select {
						case <-ctx.Done():
						case <-time.After(pace):
						}
					}
				}
			}()
		}
	}
}

func (a *attackers) stop() {
	a.cancel()
	a.wg.Wait()
}

// strangerTransport connects from src without a client certificate.
func strangerTransport(caPEM []byte, src string) *http.Transport {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"},
		DialContext:     (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext,
	}
}

// park opens a TLS connection from one of attackSources and holds it
// until the server closes it, then opens another. With served, it first
// sends one request and reads the answer, as idleClient in
// webhook/connections_test.go does: a client parking keep-alive
// connections. Without, it sends nothing at all: a flood of fresh
// connections, each of which the listener spares for its first seconds
// (newConnGrace in internal/serving/conns.go).
func (a *attackers) park(s *benchServer, served bool) func(context.Context, int) string {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.caPEM)
	return func(ctx context.Context, worker int) string {
		src := attackSources[worker%len(attackSources)]
		d := tls.Dialer{NetDialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}, Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}
		conn, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(s.base, "https://"))
		if err != nil {
			return "refused"
		}
		defer conn.Close()
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		defer stop()
		if served {
			if _, err := io.WriteString(conn, "POST /convert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
				return "closed-before-answer"
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				return "closed-before-answer"
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		a.parked.Add(1)
		defer a.parked.Add(-1)
		_, _ = conn.Read(make([]byte, 1))
		return "parked-then-closed"
	}
}

// stalledBody sends first, then nothing until its request ends.
type stalledBody struct {
	first []byte
	ctx   context.Context
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

// bodyAttack posts a body of declared length size (-1: chunked) of which
// only sent bytes ever arrive, to the paths in turn, from strangers.
func bodyAttack(s *benchServer, paths []string, size int64, sent int) func(context.Context, int) string {
	clients := make([]*http.Client, len(attackSources))
	for i, src := range attackSources {
		clients[i] = &http.Client{Transport: strangerTransport(s.caPEM, src)}
	}
	var turn atomic.Int64
	return func(ctx context.Context, worker int) string {
		path := paths[int(turn.Add(1))%len(paths)]
		reqCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, s.base+path, &stalledBody{first: make([]byte, sent), ctx: reqCtx})
		if err != nil {
			return "error"
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		resp, err := clients[worker%len(clients)].Do(req)
		if err != nil {
			return "error"
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return fmt.Sprintf("status-%d", resp.StatusCode)
	}
}

// payloadAttack posts the bodies in turn with the API server's certificate:
// hostile objects, as the API server would relay them.
func payloadAttack(s *benchServer, bodies []benchCase) func(context.Context, int) string {
	// A client of its own, so the legitimate clients' connections are not
	// shared with it.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: s.apiServerTLS.Clone()}}
	var turn atomic.Int64
	return func(ctx context.Context, _ int) string {
		c := bodies[int(turn.Add(1))%len(bodies)]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+c.path, bytes.NewReader(c.body))
		if err != nil {
			return "error"
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return "error"
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return fmt.Sprintf("status-%d", resp.StatusCode)
	}
}

// hostilePayloads are admission reviews within the 3 MiB body limit built
// to make decoding and the rules work hard. JSON has no aliases, so the
// billion laughs becomes what JSON allows: nesting as deep as the decoder
// takes and deeper, an array of a million elements, and NodePools whose
// requirements and budgets (two weeks of schedule each) the rules iterate.
func hostilePayloads(b *testing.B) []benchCase {
	// Raw values go in after encoding: the JSON encoder refuses nesting
	// deeper than the decoders take, which is the point of one of them.
	raw := func(path, field, value string) benchCase {
		obj := nodePool("hostile", fullRef)
		obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)[field] = "RAW"
		body := request{op: admissionv1.Create, object: obj}.body(b)
		return benchCase{path: path, body: bytes.Replace(body, []byte(`"RAW"`), []byte(value), 1)}
	}
	nested := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	requirementsPool := nodePool("requirements", fullRef)
	requirements := make([]any, 5000)
	for i := range requirements {
		requirements[i] = map[string]any{"key": fmt.Sprintf("example.com/key-%d", i), "operator": "In", "values": []any{"a", "b", "c"}}
	}
	requirementsPool["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["requirements"] = requirements
	budgets := make([]map[string]any, 1000)
	for i := range budgets {
		budgets[i] = map[string]any{"nodes": "10%", "schedule": fmt.Sprintf("%d %d * * *", i%60, i%24), "duration": "1h"}
	}
	review := func(path string, obj map[string]any) benchCase {
		return benchCase{path: path, body: request{op: admissionv1.Create, object: obj}.body(b)}
	}
	cases := []benchCase{
		raw("/validate", "nested", nested(9000)),
		raw("/mutate", "nested", nested(200000)),
		raw("/validate", "wide", "["+strings.Repeat("0,", 1<<20)+"0]"),
		review("/validate", requirementsPool),
		review("/mutate", nodePool("budgets", fullRef, budgets...)),
	}
	for _, c := range cases {
		if int64(len(c.body)) > webhook.DefaultMaxBodyBytes {
			b.Fatalf("a hostile payload of %d bytes is over the body limit: it would measure only the refusal", len(c.body))
		}
	}
	return cases
}
