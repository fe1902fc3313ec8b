package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/deploy"
)

func TestManagerOptions(t *testing.T) {
	tests := []struct {
		name                string
		change              func(*Options)
		wantLeaderElection  bool
		wantMetrics, wantNS string
		wantShutdownAtLeast time.Duration
	}{
		{"defaults", func(*Options) {}, true, ":8080", PodNamespace(), 30 * time.Second},
		{"no loop, no election", func(o *Options) { o.Controller = false }, false, ":8080", PodNamespace(), 30 * time.Second},
		{"election off", func(o *Options) { o.LeaderElect = false }, false, ":8080", PodNamespace(), 30 * time.Second},
		{"metrics off, own namespace", func(o *Options) { o.MetricsAddr = ""; o.LeaderElectionNamespace = "ops" }, true, "0", "ops", 30 * time.Second},
		{"long requests drain", func(o *Options) { o.RequestTimeout = 20 * time.Second }, true, ":8080", PodNamespace(), 40 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Defaults()
			tt.change(&opts)
			got := managerOptions(opts, http.NotFoundHandler())
			if got.LeaderElection != tt.wantLeaderElection || got.LeaderElectionID != deploy.LeaderElectionID || got.LeaderElectionNamespace != tt.wantNS {
				t.Errorf("leader election %v %q in %q", got.LeaderElection, got.LeaderElectionID, got.LeaderElectionNamespace)
			}
			if got.Metrics.BindAddress != tt.wantMetrics || got.Metrics.ExtraHandlers[deploy.StatusPath] == nil {
				t.Errorf("metrics on %q with handlers %v", got.Metrics.BindAddress, got.Metrics.ExtraHandlers)
			}
			if *got.GracefulShutdownTimeout < tt.wantShutdownAtLeast {
				t.Errorf("graceful shutdown %v, want at least %v", *got.GracefulShutdownTimeout, tt.wantShutdownAtLeast)
			}
		})
	}
}

func TestStatusWithoutTheLoop(t *testing.T) {
	s := &statusHandler{}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "--controller=false") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	s.set(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("pools")) }))
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "pools" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
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
	if same := (&drainer{}).after(parent, 0); same != parent {
		t.Fatal("without a delay the context must be the caller's")
	}
}
