package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/karpgate/karpgate/cmd/karpgate/app/policywatch"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/webhook"
	"github.com/karpgate/karpgate/webhook/admission"
	conversionwebhook "github.com/karpgate/karpgate/webhook/conversion"
)

// Run serves until ctx ends, then lets in-flight requests finish. It
// returns early, with a message naming the flag or file, when something
// cannot start: a broken configuration or policy, a missing certificate, a
// taken port, a cluster without Karpenter's CRDs for the loop.
func Run(ctx context.Context, opts Options) error {
	if opts.RestConfig == nil {
		return errors.New("serve: no cluster configuration")
	}
	log := opts.Log
	ctrllog.SetLogger(log)
	klog.SetLogger(log) // leader election and client-go log through klog

	engines, err := policywatch.New(ctx, policywatch.Options{
		ConfigPath: opts.ConfigPath, PolicyDirs: opts.PolicyDirs, DataDirs: opts.DataDirs,
		Environment: opts.Environment, Interval: opts.ReloadInterval, Log: log.WithName("policies"),
	})
	if err != nil {
		return fmt.Errorf("loading the policies: %w", err)
	}

	drain := &drainer{}
	status := &statusHandler{}
	mgr, err := manager.New(opts.RestConfig, managerOptions(opts, status))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	srv, err := webhook.New(webhook.Options{
		CertDir: opts.CertDir, Host: opts.Host, Port: opts.Port, CertReloadInterval: opts.CertReloadInterval,
		Limits: webhook.Limits{
			MaxInFlight:  opts.MaxConcurrentRequests,
			MaxBodyBytes: opts.MaxRequestBytes,
			Timeout:      opts.RequestTimeout,
		},
		Routes: []webhook.Route{
			{Path: deploy.ValidatePath, Handler: admission.NewValidatingWebhook(engines, log.WithName("validate"))},
			{Path: deploy.MutatePath, Handler: admission.NewMutatingWebhook(engines, log.WithName("mutate"))},
			{
				Path: deploy.ConvertPath,
				Handler: &conversionwebhook.Handler{
					NodePools: conversionwebhook.ClientNodePools{Reader: mgr.GetAPIReader()},
					Log:       log.WithName("conversion"),
				},
				// Conversion reviews carry whole lists.
				MaxBodyBytes: conversionwebhook.DefaultMaxRequestBytes,
			},
		},
	})
	if err != nil {
		return err
	}
	for _, r := range []manager.Runnable{srv, engines} {
		if err := mgr.Add(r); err != nil {
			return err
		}
	}
	checks := []struct {
		name  string
		check healthz.Checker
		ready bool
	}{
		{"ping", healthz.Ping, false},
		{"policies", engines.Loaded, true},
		{"webhook", srv.StartedChecker(), true},
		{"draining", drain.checker, true},
	}
	for _, c := range checks {
		add := mgr.AddHealthzCheck
		if c.ready {
			add = mgr.AddReadyzCheck
		}
		if err := add(c.name, c.check); err != nil {
			return err
		}
	}
	if opts.Controller {
		loop, err := controller.Setup(mgr, controller.Options{Guard: opts.Guard})
		if err != nil {
			return fmt.Errorf("the disruption loop (--controller=false turns it off): %w", err)
		}
		status.set(loop.StatusHandler())
	}
	log.Info("serving", "webhookPort", opts.Port, "certDir", opts.CertDir, "health", opts.HealthAddr, "metrics", opts.MetricsAddr,
		"config", opts.ConfigPath, "controller", opts.Controller, "leaderElection", leaderElection(opts))
	return mgr.Start(drain.after(ctx, opts.ShutdownDelay))
}

// drainer delays the end of the manager's context so that readiness fails
// first and requests already routed here are still served.
type drainer struct {
	draining atomic.Bool
	// timer is time.After; tests replace it to end the delay themselves.
	timer func(time.Duration) <-chan time.Time
}

func (d *drainer) after(ctx context.Context, delay time.Duration) context.Context {
	if delay <= 0 {
		return ctx
	}
	timer := d.timer
	if timer == nil {
		timer = time.After
	}
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		<-ctx.Done()
		d.draining.Store(true)
		<-timer(delay)
		cancel()
	}()
	return run
}

func (d *drainer) checker(_ *http.Request) error {
	if d.draining.Load() {
		return errors.New("shutting down: still serving requests already routed here")
	}
	return nil
}

func leaderElection(opts Options) bool { return opts.Controller && opts.LeaderElect }

func managerOptions(opts Options, status http.Handler) manager.Options {
	ns := opts.LeaderElectionNamespace
	if ns == "" {
		ns = PodNamespace()
	}
	// Long enough for a request that started just before the signal.
	shutdown := max(30*time.Second, 2*opts.RequestTimeout)
	return manager.Options{
		Logger: opts.Log,
		Metrics: metricsserver.Options{
			BindAddress:   orOff(opts.MetricsAddr),
			ExtraHandlers: map[string]http.Handler{deploy.StatusPath: status},
		},
		HealthProbeBindAddress: orOff(opts.HealthAddr),
		// Only the disruption loop needs a leader: every replica serves
		// webhooks, and without the loop there is nothing to elect for.
		LeaderElection:                leaderElection(opts),
		LeaderElectionID:              deploy.LeaderElectionID,
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &shutdown,
	}
}

func orOff(addr string) string {
	if addr == "" {
		return "0"
	}
	return addr
}

// statusHandler serves /status once the loop exists; the metrics server
// needs its handlers before the loop can be set up.
type statusHandler struct {
	loop atomic.Pointer[http.Handler]
}

func (s *statusHandler) set(h http.Handler) { s.loop.Store(&h) }

func (s *statusHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := s.loop.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	http.Error(w, "the disruption loop is off (karpgate serve --controller=false), so there is no NodePool status", http.StatusNotFound)
}
