package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/karpgate/karpgate/test/wait"

	"github.com/karpgate/karpgate/internal/devcluster/loopback"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/test/benchratio"
	"github.com/karpgate/karpgate/webhook"
)

// benchServer is karpgate's webhook server on loopback with the real
// handlers and, as the baseline, a handler that answers "allowed" at once:
// the same TLS, limits, decoding and encoding, without evaluating.
type benchServer struct {
	base   string
	client *http.Client
}

func startBenchServer(b *testing.B) *benchServer {
	b.Helper()
	ctrllog.SetLogger(logr.Discard())
	dir := b.TempDir()
	bundle, err := localca.New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	if err := bundle.WriteDir(dir); err != nil {
		b.Fatal(err)
	}
	ports, err := loopback.FreePorts(1)
	if err != nil {
		b.Fatal(err)
	}
	port := ports[0]
	engines := newEngine(b, "")
	fixed := ctrladmission.HandlerFunc(func(context.Context, ctrladmission.Request) ctrladmission.Response { return ctrladmission.Allowed("") })
	srv, err := webhook.New(webhook.Options{
		CertDir: dir, Host: "127.0.0.1", Port: port,
		Limits: webhook.Limits{Timeout: 8 * time.Second},
		Routes: []webhook.Route{
			{Path: "/validate", Handler: NewValidatingWebhook(engines, logr.Discard())},
			{Path: "/mutate", Handler: NewMutatingWebhook(engines, logr.Discard())},
			{Path: "/fixed", Handler: newWebhook(fixed, "fixed", logr.Discard())},
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle.CAPEM)
	s := &benchServer{
		base: fmt.Sprintf("https://127.0.0.1:%d", port),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128,
		}},
	}
	b.Cleanup(func() {
		s.client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			b.Errorf("webhook server: %v", err)
		}
	})
	wait.For(b, "the server to start", func() bool { return srv.StartedChecker()(nil) == nil })
	return s
}

// call posts one review and checks the verdict, so that a benchmark never
// measures errors as speed.
func (s *benchServer) call(path string, body []byte, wantAllowed bool) error {
	resp, err := s.client.Post(s.base+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &review); err != nil || resp.StatusCode != http.StatusOK || review.Response == nil {
		return fmt.Errorf("%s: HTTP %d %s", path, resp.StatusCode, raw)
	}
	if review.Response.Allowed != wantAllowed || review.Response.UID == "" {
		return fmt.Errorf("%s: allowed=%v uid=%q, want allowed=%v", path, review.Response.Allowed, review.Response.UID, wantAllowed)
	}
	return nil
}

type benchCase struct {
	name    string
	path    string
	body    []byte
	allowed bool
}

func benchCases(b *testing.B) []benchCase {
	return []benchCase{
		{"allowed", "/validate", request{op: admissionv1.Create, object: nodeClass("production", production, "al2023@v20240807")}.body(b), true},
		{"denied", "/validate", request{op: admissionv1.Create, object: nodeClass("production-latest", production, "al2023@latest")}.body(b), false},
		{"mutated", "/mutate", request{op: admissionv1.Create, object: nodePool("ref", map[string]any{"name": "default"})}.body(b), true},
	}
}

// BenchmarkAdmissionRoundTrip is one admission request over HTTPS on
// loopback, reported against the same request answered "allowed" without
// evaluating: the cost of karpgate's policies on top of TLS, HTTP and
// AdmissionReview decoding. The two alternate call by call, and the ratios
// of their medians and 99th percentiles are x-fixed-allowed-p50 and
// x-fixed-allowed-p99; ns/op is one of each.
func BenchmarkAdmissionRoundTrip(b *testing.B) {
	s := startBenchServer(b)
	for _, c := range benchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			must := func(path string, body []byte, allowed bool) func() {
				return func() {
					if err := s.call(path, body, allowed); err != nil {
						b.Fatal(err)
					}
				}
			}
			benchratio.Paired(b, must(c.path, c.body, c.allowed), must("/fixed", c.body, true), "x-fixed-allowed")
		})
	}
}

var loadDuration = flag.Duration("load.duration", 2*time.Second, "how long BenchmarkLoad's clients send requests (make load: 30s)")

// BenchmarkLoad is 64 concurrent clients sending allowed, denied and
// mutated requests in turn for -load.duration (make load: 30s), once,
// whatever b.N. It reports latency percentiles, throughput and errors, and
// fails on any error.
func BenchmarkLoad(b *testing.B) {
	const clients = 64
	s := startBenchServer(b)
	cases := benchCases(b)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		latencies []time.Duration
		errs      atomic.Int64
		firstErr  atomic.Value
	)
	b.ResetTimer()
	start := time.Now()
	deadline := start.Add(*loadDuration)
	for client := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := client; time.Now().Before(deadline); i++ {
				c := cases[i%len(cases)]
				t0 := time.Now()
				if err := s.call(c.path, c.body, c.allowed); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(latencies)
	percentile := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(max(len(latencies), 1)), "ns/op")
	b.ReportMetric(percentile(0.50), "p50-ms")
	b.ReportMetric(percentile(0.99), "p99-ms")
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(len(latencies)), "requests")
	b.ReportMetric(float64(errs.Load()), "errors")
	if n := errs.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed; first: %v", n, len(latencies), firstErr.Load())
	}
}
