package serve

import (
	"context"
	"errors"
	"github.com/prometheus/client_golang/prometheus"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/karpgate/karpgate/internal/deploy"
)

func TestManagerOptions(t *testing.T) {
	tests := []struct {
		name                string
		change              func(*Options)
		wantLeaderElection  bool
		wantNS              string
		wantShutdownAtLeast time.Duration
	}{
		{"defaults", func(*Options) {}, true, PodNamespace(), 30 * time.Second},
		{"election off", func(o *Options) { o.LeaderElect = false }, false, PodNamespace(), 30 * time.Second},
		{"own namespace", func(o *Options) { o.LeaderElectionNamespace = "ops" }, true, "ops", 30 * time.Second},
		{"long requests drain", func(o *Options) { o.RequestTimeout = 20 * time.Second }, true, PodNamespace(), 40 * time.Second},
		// The audit runs on the leader without the loop, so it is elected.
		{"audit without the loop", func(o *Options) { o.Controller = false }, true, PodNamespace(), 30 * time.Second},
		{"loop without the audit", func(o *Options) { o.Audit = false }, true, PodNamespace(), 30 * time.Second},
		{"neither", func(o *Options) { o.Controller, o.Audit = false, false }, false, PodNamespace(), 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Defaults()
			tt.change(&opts)
			loop := loopManagerOptions(opts)
			if loop.LeaderElection != tt.wantLeaderElection || loop.LeaderElectionID != deploy.LeaderElectionID || loop.LeaderElectionNamespace != tt.wantNS || !loop.LeaderElectionReleaseOnCancel {
				t.Errorf("leader election %v %q in %q", loop.LeaderElection, loop.LeaderElectionID, loop.LeaderElectionNamespace)
			}
			if *loop.LeaseDuration != deploy.LeaseDuration || *loop.RenewDeadline != deploy.RenewDeadline || *loop.RetryPeriod != deploy.RetryPeriod {
				t.Errorf("lease timings %v %v %v, want the explicit ones from deploy", *loop.LeaseDuration, *loop.RenewDeadline, *loop.RetryPeriod)
			}
			web := webhookManagerOptions(opts)
			if web.LeaderElection {
				t.Error("the webhooks' manager must not be elected: losing a Lease would stop it without a drain")
			}
			// karpgate serves metrics and probes itself, through capped
			// listeners.
			for _, o := range []manager.Options{loop, web} {
				if o.Metrics.BindAddress != "0" || o.HealthProbeBindAddress != "0" {
					t.Errorf("a manager serves metrics on %q and probes on %q", o.Metrics.BindAddress, o.HealthProbeBindAddress)
				}
			}
			if *web.GracefulShutdownTimeout < tt.wantShutdownAtLeast {
				t.Errorf("graceful shutdown %v, want at least %v", *web.GracefulShutdownTimeout, tt.wantShutdownAtLeast)
			}
		})
	}
}

func TestMetricsAddressFollowsSecurity(t *testing.T) {
	opts := Defaults()
	if got := opts.metricsAddr(); got != ":8080" {
		t.Errorf("secure metrics on %q, want every interface", got)
	}
	opts.MetricsSecure = false
	if got := opts.metricsAddr(); got != "127.0.0.1:8080" {
		t.Errorf("plain-HTTP metrics on %q, want loopback", got)
	}
	opts.MetricsAddr = "0"
	if got := opts.metricsAddr(); got != "0" {
		t.Errorf("metrics off became %q", got)
	}
}

func TestLeaseTimingsAreChecked(t *testing.T) {
	tests := []struct {
		timings LeaseTimings
		want    string
	}{
		{Defaults().Lease, ""},
		{LeaseTimings{Duration: 15 * time.Second, RenewDeadline: 15 * time.Second, RetryPeriod: 2 * time.Second}, "must be longer than --leader-election-renew-deadline"},
		{LeaseTimings{Duration: 15 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second}, "more than 1.2 times"},
		{LeaseTimings{Duration: 15 * time.Second, RenewDeadline: 10 * time.Second}, "must be positive"},
	}
	for _, tt := range tests {
		err := tt.timings.Check()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.timings, err, tt.want)
		}
	}
}

func TestMemoryPlan(t *testing.T) {
	const mi = 1 << 20
	tests := []struct {
		name                 string
		limit                int64
		explicit             bool
		wantHeap, wantBudget int64
		wantErr              string
	}{
		{"no limit: runtime untouched, default budget", 0, false, 0, 64 * mi, ""},
		{"the default 512Mi", 512 * mi, false, 448 * mi * 85 / 100, 448*mi*85/100 - 128*mi - 192*mi, ""},
		{"GOMEMLIMIT set by hand wins", 512 * mi, true, 0, -1, ""},
		{"too small for a 32MiB conversion review and a 3MiB admission review", 256 * mi, false, 0, 0, "give the container at least 476MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := planMemory(tt.limit, DefaultPolicyCheckMemory, 3*mi, tt.explicit)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.heapLimit != tt.wantHeap || (tt.wantBudget >= 0 && plan.requestBudget != tt.wantBudget) {
				t.Fatalf("heap limit %d, budget %d; want %d, %d", plan.heapLimit, plan.requestBudget, tt.wantHeap, tt.wantBudget)
			}
		})
	}
}

// TestLoopEndpointsWithoutTheLoop: with --controller=false, /status and
// /explain say why they have nothing (the loop's own handlers are tested
// end to end).
func TestLoopEndpointsWithoutTheLoop(t *testing.T) {
	opts := Defaults()
	opts.MetricsSecure = false // the handler itself, without the TokenReview filter
	handler, _, err := metricsHandler(opts, newLoopEndpoints())
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{deploy.StatusPath, deploy.ExplainPath + "?node=x"} {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "--controller=false") {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}

func TestDrainingFailsReadinessBeforeTheManagerStops(t *testing.T) {
	delayStarted := make(chan time.Duration, 1)
	delayOver := make(chan time.Time)
	d := &drainer{timer: func(delay time.Duration) <-chan time.Time {
		delayStarted <- delay
		return delayOver
	}}
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := d.after(parent, 300*time.Millisecond)
	if err := d.checker(nil); err != nil {
		t.Fatalf("ready before shutdown: %v", err)
	}
	cancel()
	if got := <-delayStarted; got != 300*time.Millisecond {
		t.Fatalf("the drain waits %v, want the configured 300ms", got)
	}
	if err := d.checker(nil); err == nil || run.Err() != nil {
		t.Fatalf("during the delay: readiness %v, manager context %v; want not ready and still running", err, run.Err())
	}
	close(delayOver)
	<-run.Done() // the delay is over: the manager's context ends
	// Without a delay the context ends as soon as the drain starts.
	quickParent, quickCancel := context.WithCancel(context.Background())
	quickRun := (&drainer{}).after(quickParent, 0)
	quickCancel()
	<-quickRun.Done()
}

// fakeLoop is a loop manager that stops when told to, with an error.
type fakeLoop struct {
	manager.Manager
	stop chan error
}

func (f fakeLoop) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-f.stop:
		return err
	}
}

// TestTheLoopRestartsOnItsOwn: a loop that stops (its Lease lost) is
// replaced by a new one after a pause; the supervisor itself returns only
// when its context ends, so the webhooks beside it never stop.
func TestTheLoopRestartsOnItsOwn(t *testing.T) {
	loops := make(chan fakeLoop, 3)
	for range 3 {
		loops <- fakeLoop{stop: make(chan error, 1)}
	}
	first := <-loops
	var started []fakeLoop
	pauses := make(chan time.Duration, 10)
	s := &loopSupervisor{
		first: first,
		next: func() (manager.Manager, error) {
			l := <-loops
			started = append(started, l)
			if len(started) == 1 {
				return nil, errors.New("the API server is away")
			}
			return l, nil
		},
		log: logr.Discard(),
		after: func(d time.Duration) <-chan time.Time {
			pauses <- d
			c := make(chan time.Time, 1)
			c <- time.Time{}
			return c
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	before := testutil.ToFloat64(loopRestarts)
	go func() { done <- s.run(ctx) }()
	first.stop <- errors.New("leader election lost")
	// A failed setup, then a new loop, each after a longer pause.
	if got := []time.Duration{<-pauses, <-pauses}; got[0] != firstLoopBackoff || got[1] != 2*firstLoopBackoff {
		t.Fatalf("pauses %v, want %v then twice it", got, firstLoopBackoff)
	}
	select {
	case err := <-done:
		t.Fatalf("the supervisor returned %v while its context lasts", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("after its context ended: %v", err)
	}
	if got := testutil.ToFloat64(loopRestarts) - before; got != 1 {
		t.Errorf("karpgate_disruption_loop_restarts_total rose by %v, want 1", got)
	}
}

// TestMetricsOfTwoServesStayApart: each serve's /metrics shows its own
// loop's series and not another serve's in the same process (the
// Karpenter suite runs a cluster per release side by side), besides the
// process-wide registry both share.
func TestMetricsOfTwoServesStayApart(t *testing.T) {
	opts := Defaults()
	opts.MetricsSecure = false
	a, b := newLoopEndpoints(), newLoopEndpoints()
	pools := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "karpgate_test_pool", Help: "test"}, []string{"nodepool"})
	pools.WithLabelValues("only-in-a").Set(1)
	a.metrics.MustRegister(pools)
	scrape := func(e *loopEndpoints) string {
		handler, _, err := metricsHandler(opts, e)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Body.String()
	}
	if got := scrape(a); !strings.Contains(got, `karpgate_test_pool{nodepool="only-in-a"} 1`) || !strings.Contains(got, "go_goroutines") {
		t.Errorf("serve a's /metrics lacks its own series or the process's:\n%s", got)
	}
	if got := scrape(b); strings.Contains(got, "karpgate_test_pool") {
		t.Errorf("serve b's /metrics shows serve a's series:\n%s", got)
	}
}
