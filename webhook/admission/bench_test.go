package admission

import (
	"bytes"
	"context"
	"crypto/tls"
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

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karpgate/karpgate/test/benchratio"
	"github.com/karpgate/karpgate/webhook"
	conversionwebhook "github.com/karpgate/karpgate/webhook/conversion"
)

// benchServer is karpgate's webhook server on loopback, set up as
// `karpgate serve` sets it up: the real admission handlers with their
// memory factor, each requiring the API server's client certificate when
// the server has a client CA, and /convert with conversion's body limit
// and budget (a stand-in handler: the attacks on it are refused or cut
// before a handler runs). As the baseline of the round trip, /fixed
// answers "allowed" at once: the same TLS, limits, decoding and encoding,
// without evaluating. client is the API server: it connects from
// 127.0.0.1 and, with a client CA, presents its certificate.
type benchServer struct {
	base   string
	client *http.Client
	caPEM  []byte
	srv    *webhook.Server
	// apiServerTLS is the client's TLS configuration, for more clients
	// like it.
	apiServerTLS *tls.Config
}

// benchInstall is how an install lets karpgate know the API server, and
// how it divides memory.
type benchInstall struct {
	name string
	// clientCA: --client-ca-file, and the API server presents a
	// certificate it signed (an AdmissionConfiguration, where the control
	// plane can be configured).
	clientCA bool
	// trusted: --trusted-source-cidrs=127.0.0.1/32, the API server's
	// address (EKS: its network interfaces in the VPC).
	trusted bool
	// admissionBudget and conversionBudget are the memory plan.
	admissionBudget, conversionBudget int64
}

// The memory plans. Without --memory-limit `karpgate serve` gives
// conversion one review at its body limit and admission the rest of the
// default budget; with the install's --memory-limit 512Mi, the admission
// budget is what 85% of the limit after the policy check's 64 MiB leaves
// after 128 MiB for karpgate itself and conversion's share, about 60 MiB
// (planMemory in cmd/karpgate/app/serve/memory.go; docs/operations.md
// works it through).
const (
	benchConversionBudget   = conversionwebhook.DefaultMaxRequestBytes * conversionwebhook.MemoryFactor
	benchAdmissionBudget    = webhook.DefaultMemoryBudget - benchConversionBudget
	installAdmissionBudget  = (512<<20-64<<20)*85/100 - 128<<20 - benchConversionBudget
	installConversionBudget = benchConversionBudget
)

// withClientCA is the server the round-trip benchmarks measure.
var withClientCA = benchInstall{name: "client-ca", clientCA: true, admissionBudget: benchAdmissionBudget, conversionBudget: benchConversionBudget}

func startBenchServer(b *testing.B, install benchInstall) *benchServer {
	b.Helper()
	ctrllog.SetLogger(logr.Discard())
	engines := newEngine(b, "")
	fixed := ctrladmission.HandlerFunc(func(context.Context, ctrladmission.Request) ctrladmission.Response { return ctrladmission.Allowed("") })
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "{}") })
	opts := tlsServerOptions{limits: webhook.Limits{Timeout: 8 * time.Second, MemoryBudget: install.admissionBudget}, verifyClients: install.clientCA}
	if install.trusted {
		opts.trusted = []string{"127.0.0.1"}
	}
	ts := startTLSServer(b, opts,
		webhook.Route{Path: "/validate", Handler: NewValidatingWebhook(engines, logr.Discard()), MemoryFactor: MemoryFactor, MemoryPerValue: MemoryPerValue, RequireClientCert: true},
		webhook.Route{Path: "/mutate", Handler: NewMutatingWebhook(engines, logr.Discard()), MemoryFactor: MemoryFactor, MemoryPerValue: MemoryPerValue, RequireClientCert: true},
		webhook.Route{Path: "/fixed", Handler: newWebhook(fixed, "fixed", logr.Discard()), MemoryFactor: MemoryFactor, MemoryPerValue: MemoryPerValue, RequireClientCert: true},
		webhook.Route{Path: "/convert", Handler: ok, MaxBodyBytes: conversionwebhook.DefaultMaxRequestBytes, MemoryFactor: conversionwebhook.MemoryFactor,
			Budget: &webhook.Budget{MaxInFlight: 16, Memory: install.conversionBudget}},
	)
	s := &benchServer{
		base:         ts.base,
		caPEM:        ts.bundle.CAPEM,
		srv:          ts.srv,
		apiServerTLS: &tls.Config{RootCAs: ts.bundle.CertPool()},
	}
	if install.clientCA {
		apiServer, err := ts.bundle.ClientTLS("kube-apiserver")
		if err != nil {
			b.Fatal(err)
		}
		s.apiServerTLS.Certificates = []tls.Certificate{apiServer}
	}
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: s.apiServerTLS, MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128,
	}}
	// Registered after the server's: closes the idle connections first.
	b.Cleanup(s.client.CloseIdleConnections)
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
	s := startBenchServer(b, withClientCA)
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
	s := startBenchServer(b, withClientCA)
	b.ResetTimer()
	r := runLoad(s, benchCases(b), *loadDuration)
	b.StopTimer()
	b.ReportMetric(float64(r.elapsed.Nanoseconds())/float64(max(len(r.latencies), 1)), "ns/op")
	b.ReportMetric(r.percentile(0.50), "p50-ms")
	b.ReportMetric(r.percentile(0.99), "p99-ms")
	b.ReportMetric(float64(len(r.latencies))/r.elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(len(r.latencies)), "requests")
	b.ReportMetric(float64(r.errors), "errors")
	if r.errors > 0 {
		b.Fatalf("%d of %d requests failed; first: %v", r.errors, len(r.latencies), r.firstErr)
	}
}

// loadClients is how many legitimate clients a load run has: as many as
// the server's request slots (webhook.DefaultMaxInFlight).
const loadClients = 64

// loadResult is one load run: every request's latency, sorted.
type loadResult struct {
	latencies []time.Duration
	elapsed   time.Duration
	errors    int64
	firstErr  any
}

// runLoad sends cases in turn from loadClients clients for duration.
func runLoad(s *benchServer, cases []benchCase, duration time.Duration) loadResult {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		r        loadResult
		errs     atomic.Int64
		firstErr atomic.Value
	)
	start := time.Now()
	deadline := start.Add(duration)
	for client := range loadClients {
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
			r.latencies = append(r.latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	r.errors, r.firstErr = errs.Load(), firstErr.Load()
	slices.Sort(r.latencies)
	return r
}

// percentile is the p-th percentile of the latencies in milliseconds.
func (r loadResult) percentile(p float64) float64 {
	if len(r.latencies) == 0 {
		return 0
	}
	return float64(r.latencies[int(p*float64(len(r.latencies)-1))].Microseconds()) / 1000
}

// valueCountSink keeps BenchmarkValueCount's result alive.
var valueCountSink int64

// BenchmarkValueCount is what the per-value charge (MemoryPerValue) adds
// to every admission request: one pass over the body counting its JSON
// values, against the round trip it is part of (x-roundtrip-p50 is the
// count's share of a whole request's p50).
func BenchmarkValueCount(b *testing.B) {
	s := startBenchServer(b, withClientCA)
	for _, c := range benchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			count := func() { valueCountSink = webhook.ValueCount(c.body) }
			roundTrip := func() {
				if err := s.call(c.path, c.body, c.allowed); err != nil {
					b.Fatal(err)
				}
			}
			benchratio.Paired(b, count, roundTrip, "x-roundtrip")
		})
	}
}
