package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	auditcontroller "github.com/karpgate/karpgate/audit/controller"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter/installed"
	"github.com/karpgate/karpgate/policies/policywatch"
	"github.com/karpgate/karpgate/webhook"
	"github.com/karpgate/karpgate/webhook/admission"
	conversionwebhook "github.com/karpgate/karpgate/webhook/conversion"
)

// Run serves until ctx ends, then lets in-flight requests finish. It
// returns early, with a message naming the flag or file, when something
// cannot start: a broken configuration or policy, a missing certificate, a
// taken port, a cluster without Karpenter's CRDs for the loop, a memory
// limit too small for the body limits. If the disruption loop stops on its
// own (it lost its Lease), the webhooks drain as on SIGTERM and Run returns
// the loop's error, so that the process exits and is restarted.
func Run(ctx context.Context, opts Options) error {
	if opts.RestConfig == nil {
		return errors.New("serve: no cluster configuration")
	}
	log := opts.Log
	if !opts.KeepProcessLoggers {
		ctrllog.SetLogger(log)
		klog.SetLogger(log) // leader election and client-go log through klog
	}

	checkMemory := opts.PolicyCheckMemory
	if opts.PolicyCheck == nil {
		checkMemory = 0 // checked in this process, within its own budget
	}
	memory, err := planMemory(opts.MemoryLimit, checkMemory, opts.MaxRequestBytes, explicitGOMEMLIMIT())
	if err != nil {
		return err
	}
	memory.apply()
	loop := newLoopEndpoints()

	// The release of the cluster's Karpenter CRDs, read before the first
	// engine compiles and watched after: the engine judges by it unless
	// karpgate.yaml's karpenterVersion chooses (policywatch.Judged).
	karpenterCRDs, err := installed.New(opts.RestConfig, log.WithName("karpenter-crds"))
	if err != nil {
		return err
	}
	karpenterCRDs.Read(ctx)
	watch := policywatch.Options{
		ConfigPath: opts.ConfigPath, PolicyDirs: opts.PolicyDirs, DataDirs: opts.DataDirs,
		Environment: opts.Environment, Interval: opts.ReloadInterval, Log: log.WithName("policies"),
		Cluster: karpenterCRDs.Judged,
	}
	if opts.PolicyCheck != nil {
		if watch.Check, err = opts.PolicyCheck(opts.PolicyCheckMemory); err != nil {
			return err
		}
	}
	if opts.KeepLastGood {
		if watch, err = withLastGood(watch, opts.RestConfig, log.WithName("policies")); err != nil {
			return err
		}
	}
	engines, err := policywatch.New(ctx, watch)
	if err != nil {
		return fmt.Errorf("loading the policies: %w", err)
	}
	karpenterCRDs.OnChange = func(ctx context.Context) { _, _ = engines.Rejudge(ctx) } // logged and counted inside
	if err := loop.metrics.Register(judgedInfo{engines}); err != nil {
		return err
	}

	twinParams, err := setupAdmissionPolicy(opts, engines)
	if err != nil {
		return err
	}
	var twins admission.Twins
	if twinParams != nil {
		twins = twinParams
	}

	drain := &drainer{}
	webhookConfig := webhookClientConfig(opts.RestConfig)
	mgr, err := manager.New(webhookConfig, webhookManagerOptions(opts))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	nodePools, err := conversionwebhook.NewNodePoolCache(webhookConfig)
	if err != nil {
		return err
	}
	plansReader, err := rolloutPlansReader(webhookConfig)
	if err != nil {
		return err
	}
	srv, err := webhook.New(webhook.Options{
		CertDir: opts.CertDir, Host: opts.Host, Port: opts.Port, CertReloadInterval: opts.CertReloadInterval,
		ClientCAFile: opts.ClientCAFile, TrustedSources: opts.TrustedSources,
		Limits: webhook.Limits{
			MaxInFlight:    opts.MaxConcurrentRequests,
			MaxBodyBytes:   opts.MaxRequestBytes,
			MemoryBudget:   memory.requestBudget,
			Timeout:        opts.RequestTimeout,
			MaxConnections: opts.MaxConnections,
		},
		ShutdownTimeout: shutdownTimeout(opts),
		Log:             log.WithName("webhook"),
		Routes: routes(engines, twins, &conversionwebhook.Handler{
			NodePools: conversionwebhook.ClientNodePools{
				Reader: mgr.GetAPIReader(), Cache: nodePools.Reader(), Synced: nodePools.Synced, Log: log.WithName("conversion"),
			},
			NodePoolReviewed: nodePools.Want,
			// Only trusted addresses tell the API server's conversion
			// reviews from a stranger's: it presents no certificate there.
			KnownCallersOnly: len(opts.TrustedSources) > 0,
			Log:              log.WithName("conversion"),
		}, &webhook.Budget{MaxInFlight: conversionSlots, Memory: memory.conversionBudget}, plansReader, log),
	})
	if err != nil {
		return err
	}
	for _, r := range []manager.Runnable{srv, engines, nodePools, karpenterCRDs} {
		if err := mgr.Add(r); err != nil {
			return err
		}
	}
	if twinParams != nil {
		if err := mgr.Add(twinParams); err != nil {
			return err
		}
	}
	probes := healthChecks{
		healthz: map[string]func(*http.Request) error{"ping": func(*http.Request) error { return nil }},
		readyz:  map[string]func(*http.Request) error{"policies": engines.Loaded, "webhook": srv.StartedChecker(), "draining": drain.checker},
	}
	servers, err := httpServers(opts, probes, loop)
	if err != nil {
		return err
	}
	for _, s := range servers {
		if err := mgr.Add(s); err != nil {
			return err
		}
	}
	var leader *loopSupervisor
	if runsOnLeader(opts) {
		newLeader := func() (manager.Manager, error) { return setupLeader(opts, engines, loop, log) }
		// The first setup's errors stop the start: a cluster without
		// Karpenter's CRDs is a configuration mistake to say at once.
		first, err := newLeader()
		if err != nil {
			return err
		}
		leader = &loopSupervisor{first: first, next: newLeader, log: log.WithName("loop")}
	}
	log.Info("serving", "webhookPort", opts.Port, "certDir", opts.CertDir, "health", opts.HealthAddr, "metrics", opts.metricsAddr(),
		"metricsSecure", opts.MetricsSecure, "config", opts.ConfigPath, "controller", opts.Controller, "audit", opts.Audit, "leaderElection", leaderElection(opts),
		"memoryLimit", opts.MemoryLimit, "heapLimit", memory.heapLimit, "requestMemoryBudget", memory.requestBudget, "conversionMemoryBudget", memory.conversionBudget,
		"clientCA", opts.ClientCAFile != "", "trustedSources", opts.TrustedSources.String())
	return run(ctx, opts, mgr, leader, drain)
}

// runsOnLeader reports whether serve runs anything on the elected leader:
// the disruption loop, the audit, or both. Each has a flag of its own, so
// --controller=false keeps the audit (--audit defaults to on).
func runsOnLeader(opts Options) bool { return opts.Controller || opts.Audit }

// setupLeader builds the leader-elected manager with what the flags ask
// for: the disruption loop and its rollout plans (--controller), and the
// audit of stored objects (--audit).
func setupLeader(opts Options, engines *policywatch.Watcher, loop *loopEndpoints, log logr.Logger) (manager.Manager, error) {
	m, err := manager.New(opts.RestConfig, loopManagerOptions(opts))
	if err != nil {
		return nil, fmt.Errorf("creating the leader's manager: %w", err)
	}
	if opts.Controller {
		l, err := controller.Setup(m, controller.Options{Guard: opts.Guard,
			// karpgate.yaml's timezone, as last reloaded: display only.
			Location:   func() *time.Location { return engines.Engine().Config().Location() },
			Judged:     loopJudged(engines),
			Registerer: loop.metrics})
		if err != nil {
			return nil, fmt.Errorf("the disruption loop (--controller=false turns it off): %w", err)
		}
		loop.set(l)
		if err := setupRolloutPlans(m, l, loop.metrics, log); err != nil {
			return nil, err
		}
	}
	if opts.Audit {
		a := opts.AuditOptions
		if _, err := auditcontroller.Setup(m, auditcontroller.Options{
			Engines: engines, Interval: a.Interval, EvaluationsPerSecond: a.EvaluationsPerSecond,
			ReportWritesPerSecond: a.ReportWritesPerSecond, NoReports: !a.Reports, NoEvents: !a.Events,
			ReportMaxBytes: a.ReportMaxBytes, ReportsPerObject: a.ReportsPerObject,
			Registerer: loop.metrics, Log: log.WithName("audit"),
		}); err != nil {
			return nil, fmt.Errorf("the audit of stored objects (--audit=false turns it off): %w", err)
		}
	}
	return m, nil
}

// run starts the webhooks' manager and, with the loop, its supervisor.
// The webhooks stop ShutdownDelay after ctx ends; the loop stops as soon
// as ctx ends, releasing its Lease to another replica. When the loop stops
// on its own (it lost its Lease, or its API calls failed), the supervisor
// starts a new one and the webhooks never notice: a failure of the loop
// must not take down the admission and conversion webhooks, on which every
// NodePool write and every read of Karpenter's objects at another version
// depend.
func run(ctx context.Context, opts Options, webhooks manager.Manager, loops *loopSupervisor, drain *drainer) error {
	webhookCtx := drain.after(ctx, opts.ShutdownDelay)
	webhooksDone := make(chan error, 1)
	go func() { webhooksDone <- webhooks.Start(webhookCtx) }()
	if loops == nil {
		return <-webhooksDone
	}
	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	loopsDone := make(chan error, 1)
	go func() { loopsDone <- loops.run(loopCtx) }()
	select {
	case err := <-webhooksDone:
		stopLoop()
		return errors.Join(err, <-loopsDone)
	case err := <-loopsDone:
		return errors.Join(err, <-webhooksDone)
	}
}

// routes are the webhook endpoints with their limits; conversion has a
// budget of its own.
func routes(engines admission.Engines, twins admission.Twins, convert *conversionwebhook.Handler, conversion *webhook.Budget, plans client.Reader, log logr.Logger) []webhook.Route {
	validator := &admission.Validator{Engines: engines, Twins: twins, Log: log.WithName("validate")}
	return []webhook.Route{
		{Path: deploy.ValidateRolloutPlansPath, Handler: admission.NewRolloutPlansWebhook(plans, log.WithName("rolloutplans")), MemoryFactor: admission.MemoryFactor, MemoryPerValue: admission.MemoryPerValue, RequireClientCert: true},
		{Path: deploy.ValidatePath, Handler: admission.ValidatingWebhook(validator), MemoryFactor: admission.MemoryFactor, MemoryPerValue: admission.MemoryPerValue, RequireClientCert: true},
		{Path: deploy.MutatePath, Handler: admission.NewMutatingWebhook(engines, log.WithName("mutate")), MemoryFactor: admission.MemoryFactor, MemoryPerValue: admission.MemoryPerValue, RequireClientCert: true},
		{
			Path:    deploy.ConvertPath,
			Handler: convert,
			// Conversion reviews carry whole lists.
			MaxBodyBytes: conversionwebhook.DefaultMaxRequestBytes,
			MemoryFactor: conversionwebhook.MemoryFactor,
			Budget:       conversion,
		},
	}
}

func leaderElection(opts Options) bool { return runsOnLeader(opts) && opts.LeaderElect }

// The webhooks' client rate: client-go's default of 5 requests a second
// let a conversion review that read 50 NodePools run past its timeout.
// The NodePool cache answers those lookups now; this bounds what is left
// (the lookups before the cache has synced, the cache's own list) at a
// rate the API server's priority and fairness can still shape.
const (
	webhookClientQPS   = 50
	webhookClientBurst = 100
)

func webhookClientConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.QPS, out.Burst = webhookClientQPS, webhookClientBurst
	return out
}

// shutdownTimeout is long enough for a request that started just before
// the signal.
func shutdownTimeout(opts Options) time.Duration {
	return max(30*time.Second, 2*opts.RequestTimeout)
}

// webhookManagerOptions: the manager that serves on every replica. It has
// no leader election, so nothing but ctx stops it, and it runs no metrics
// or probe server of its own: httpServers adds them with capped listeners.
func webhookManagerOptions(opts Options) manager.Options {
	shutdown := shutdownTimeout(opts)
	return manager.Options{
		Logger:                  opts.Log,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		GracefulShutdownTimeout: &shutdown,
	}
}

// loopManagerOptions: the manager of the disruption loop, elected with the
// Lease when LeaderElect. Its metrics reach /metrics through the shared
// registry.
func loopManagerOptions(opts Options) manager.Options {
	ns := opts.LeaderElectionNamespace
	if ns == "" {
		ns = PodNamespace()
	}
	shutdown := 10 * time.Second
	lease, renew, retry := opts.Lease.Duration, opts.Lease.RenewDeadline, opts.Lease.RetryPeriod
	return manager.Options{
		Logger:                        opts.Log.WithName("loop"),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                leaderElection(opts),
		LeaderElectionID:              deploy.LeaderElectionID,
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		GracefulShutdownTimeout:       &shutdown,
	}
}

// loopEndpoints serve /status and /explain once the loop exists; the
// metrics server needs its handlers before the loop can be set up.
type loopEndpoints struct {
	loop atomic.Pointer[controller.Loop]
	// metrics holds the collectors of this serve's disruption loop and
	// audit, which describe one cluster's NodePools; /metrics serves it
	// beside controller-runtime's process-wide registry. In that shared
	// registry a second serve in the process (the Karpenter suite runs a
	// cluster per release side by side) replaced the first one's
	// collector, and each cluster's /metrics showed the other's pools.
	metrics *prometheus.Registry
}

func newLoopEndpoints() *loopEndpoints { return &loopEndpoints{metrics: prometheus.NewRegistry()} }

// gatherer is what /metrics serves: the process's metrics and this
// serve's loop and audit.
func (e *loopEndpoints) gatherer() prometheus.Gatherer {
	return prometheus.Gatherers{ctrlmetrics.Registry, e.metrics}
}

func (e *loopEndpoints) set(l *controller.Loop) { e.loop.Store(l) }

func (e *loopEndpoints) serve(handler func(*controller.Loop) http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l := e.loop.Load(); l != nil {
			handler(l).ServeHTTP(w, r)
			return
		}
		http.Error(w, "the disruption loop is off (karpgate serve --controller=false), so there is no NodePool status to explain", http.StatusNotFound)
	})
}
