package webhook

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/internal/devcluster/loopback"
	"github.com/karpgate/karpgate/internal/serving"
)

// sharedServer is a server whose /hold handler keeps every request until
// the test ends, so that requests hold their slots and memory, and whose
// /caller handler answers what it knows of the caller.
type sharedServer struct {
	base   string
	bundle *localca.Bundle
	srv    *Server
	held   chan struct{} // one value per request /hold has entered
}

func startSharedServer(t *testing.T, limits Limits, trusted []string, clientCA bool) *sharedServer {
	t.Helper()
	dir := t.TempDir()
	s := &sharedServer{bundle: writeCerts(t, dir), held: make(chan struct{}, 100)}
	release := make(chan struct{})
	hold := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.held <- struct{}{}
		<-release
		echo(w, r)
	})
	caller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := serving.CallerOf(r.Context())
		if !ok {
			_, _ = io.WriteString(w, "none")
			return
		}
		_, _ = io.WriteString(w, c.Source.String()+map[bool]string{true: " verified", false: ""}[c.Verified]+map[bool]string{true: " trusted", false: ""}[c.TrustedSource])
	})
	sources, err := serving.ParseTrustedSources(trusted)
	if err != nil {
		t.Fatal(err)
	}
	port := loopback.TestPort(t)
	opts := Options{CertDir: dir, Host: "127.0.0.1", Port: port, Limits: limits, TrustedSources: sources, Routes: []Route{
		{Path: "/hold", Handler: hold, MaxBodyBytes: 1000, MemoryFactor: 4},
		{Path: "/caller", Handler: caller, MaxBodyBytes: 100},
	}}
	if clientCA {
		opts.ClientCAFile = filepath.Join(dir, localca.CAFile)
	}
	if s.srv, err = New(opts); err != nil {
		t.Fatal(err)
	}
	s.base, _ = serveUntilTestEnds(t, s.srv, port)
	// Before the server's own cleanup, which waits for requests in flight.
	t.Cleanup(func() { close(release) })
	return s
}

// from is a client connecting from the loopback address src, with the API
// server's client certificate when withCert.
func (s *sharedServer) from(t *testing.T, src string, withCert bool) *http.Client {
	t.Helper()
	conf := &tls.Config{RootCAs: s.bundle.CertPool(), ServerName: "127.0.0.1"}
	if withCert {
		cert, err := s.bundle.ClientTLS("kube-apiserver")
		if err != nil {
			t.Fatal(err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: conf, DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: time.Minute, Transport: tr}
}

// hold sends a request to /hold from c and returns once the handler has
// it, or its answer when it was turned away.
func (s *sharedServer) hold(t *testing.T, c *http.Client, size int) (code int, body string) {
	t.Helper()
	answered := make(chan struct {
		code int
		body string
	}, 1)
	go func() {
		resp, err := c.Post(s.base+"/hold", "application/json", strings.NewReader(strings.Repeat("x", size)))
		if err != nil {
			answered <- struct {
				code int
				body string
			}{0, err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- struct {
			code int
			body string
		}{resp.StatusCode, string(b)}
	}()
	select {
	case <-s.held:
		return http.StatusOK, "" // held by the handler
	case a := <-answered:
		return a.code, a.body
	}
}

// TestStrangersLeaveTheAPIServerItsShare fills, in each case, what
// strangers (no client certificate, an address outside the trusted ones)
// may hold, and checks who still gets in: with trusted addresses, the API
// server always finds its half of the slots and of the memory, and one
// stranger's address its eighth of the slots; without, strangers may
// take all (the API server is a stranger too, and must not be shut out by
// the caps), one address at most half.
func TestStrangersLeaveTheAPIServerItsShare(t *testing.T) {
	type caller struct {
		src  string
		cert bool
	}
	api, apiWithCert := caller{"127.0.0.1", false}, caller{"127.0.0.1", true}
	for _, tt := range []struct {
		name     string
		limits   Limits
		trusted  []string
		clientCA bool
		// fill are held one after another, each let in.
		fill []caller
		size int // of each request
		// next is the caller that comes last, and what it gets.
		next       caller
		wantCode   int
		wantReason string
	}{{
		name:   "strangers hold half the slots: another stranger waits, then is turned away",
		limits: Limits{MaxInFlight: 4, MaxInFlightPerSource: 4, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.1"},
		fill: []caller{{"127.0.0.2", false}, {"127.0.0.3", false}}, size: 10,
		next: caller{"127.0.0.4", false}, wantCode: http.StatusTooManyRequests, wantReason: "saturated",
	}, {
		name:   "strangers hold half the slots: the trusted address gets in",
		limits: Limits{MaxInFlight: 4, MaxInFlightPerSource: 4, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.1"},
		fill: []caller{{"127.0.0.2", false}, {"127.0.0.3", false}}, size: 10,
		next: api, wantCode: http.StatusOK,
	}, {
		name:   "strangers hold half the slots: a verified certificate gets in",
		limits: Limits{MaxInFlight: 4, MaxInFlightPerSource: 4, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.9"}, clientCA: true,
		fill: []caller{{"127.0.0.2", false}, {"127.0.0.3", false}}, size: 10,
		next: apiWithCert, wantCode: http.StatusOK,
	}, {
		name:   "strangers hold half the memory: another stranger that sends is turned away",
		limits: Limits{MaxInFlight: 16, MaxInFlightPerSource: 16, MemoryBudget: 8000, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.1"},
		fill: []caller{{"127.0.0.2", false}}, size: 1000,
		next: caller{"127.0.0.3", false}, wantCode: http.StatusTooManyRequests, wantReason: "saturated",
	}, {
		name:   "strangers hold half the memory: the trusted address gets in",
		limits: Limits{MaxInFlight: 16, MaxInFlightPerSource: 16, MemoryBudget: 8000, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.1"},
		fill: []caller{{"127.0.0.2", false}}, size: 1000,
		next: api, wantCode: http.StatusOK,
	}, {
		name:   "a body larger than the strangers' share of memory is refused to a stranger at once",
		limits: Limits{MemoryBudget: 6000}, trusted: []string{"127.0.0.1"}, size: 1000,
		next: caller{"127.0.0.2", false}, wantCode: http.StatusRequestEntityTooLarge, wantReason: "too_large",
	}, {
		name:   "and served to the trusted address",
		limits: Limits{MemoryBudget: 6000}, trusted: []string{"127.0.0.1"}, size: 1000,
		next: api, wantCode: http.StatusOK,
	}, {
		name:   "with trusted addresses a stranger's address holds an eighth of the slots",
		limits: Limits{MaxInFlight: 16, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.1"},
		fill: []caller{{"127.0.0.2", false}, {"127.0.0.2", false}}, size: 10,
		next: caller{"127.0.0.2", false}, wantCode: http.StatusTooManyRequests, wantReason: "source",
	}, {
		name:   "while another stranger's address still gets in",
		limits: Limits{MaxInFlight: 16, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.1"},
		fill: []caller{{"127.0.0.2", false}, {"127.0.0.2", false}}, size: 10,
		next: caller{"127.0.0.3", false}, wantCode: http.StatusOK,
	}, {
		name:   "the trusted address is held to no share of its own",
		limits: Limits{MaxInFlight: 16, MaxQueueWait: 100 * time.Millisecond}, trusted: []string{"127.0.0.1"},
		fill: []caller{api, api, api, api}, size: 10,
		next: api, wantCode: http.StatusOK,
	}, {
		name:   "without trusted addresses one address holds half the slots",
		limits: Limits{MaxInFlight: 4, MaxQueueWait: 100 * time.Millisecond},
		fill:   []caller{api, api}, size: 10,
		next: api, wantCode: http.StatusTooManyRequests, wantReason: "source",
	}, {
		name:   "without trusted addresses strangers may take every slot",
		limits: Limits{MaxInFlight: 4, MaxQueueWait: 100 * time.Millisecond},
		fill:   []caller{{"127.0.0.2", false}, {"127.0.0.2", false}, {"127.0.0.3", false}, {"127.0.0.3", false}}, size: 10,
		next: api, wantCode: http.StatusTooManyRequests, wantReason: "saturated",
	}, {
		name:   "with a client CA and no trusted addresses, a verified caller is held to no address's share",
		limits: Limits{MaxInFlight: 4, MaxQueueWait: 100 * time.Millisecond}, clientCA: true,
		fill: []caller{apiWithCert, apiWithCert}, size: 10,
		next: apiWithCert, wantCode: http.StatusOK,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			s := startSharedServer(t, tt.limits, tt.trusted, tt.clientCA)
			for i, c := range tt.fill {
				if code, body := s.hold(t, s.from(t, c.src, c.cert), tt.size); code != http.StatusOK {
					t.Fatalf("filling: request %d from %s got %d %s", i, c.src, code, body)
				}
			}
			before := 0.0
			if tt.wantReason != "" {
				before = testutil.ToFloat64(rejectedRequests.WithLabelValues("/hold", tt.wantReason))
			}
			code, body := s.hold(t, s.from(t, tt.next.src, tt.next.cert), tt.size)
			if code != tt.wantCode {
				t.Fatalf("the last request from %s got %d %s, want %d", tt.next.src, code, body, tt.wantCode)
			}
			if tt.wantReason != "" {
				if after := testutil.ToFloat64(rejectedRequests.WithLabelValues("/hold", tt.wantReason)); after != before+1 {
					t.Errorf("rejections for %s went %v -> %v, want +1", tt.wantReason, before, after)
				}
				if s := statusMessage(t, body); s.Message == "" {
					t.Errorf("a rejection without a message: %s", body)
				}
			}
		})
	}
}

// TestHandlersKnowTheCaller: what the limits learnt of the caller reaches
// the handler, for conversion to decide whom it looks NodePools up for.
func TestHandlersKnowTheCaller(t *testing.T) {
	s := startSharedServer(t, Limits{}, []string{"127.0.0.1"}, true)
	for _, tt := range []struct {
		src  string
		cert bool
		want string
	}{
		{"127.0.0.1", false, "127.0.0.1 trusted"},
		{"127.0.0.1", true, "127.0.0.1 verified trusted"},
		{"127.0.0.2", true, "127.0.0.2 verified"},
		{"127.0.0.2", false, "127.0.0.2"},
	} {
		resp, err := s.from(t, tt.src, tt.cert).Post(s.base+"/caller", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != tt.want {
			t.Errorf("from %s (certificate %v): the handler saw %q, want %q", tt.src, tt.cert, body, tt.want)
		}
	}
}
