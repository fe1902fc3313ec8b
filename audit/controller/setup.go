package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/internal/promreg"
)

// Audit is the audit added to a manager: it runs on the elected leader.
type Audit struct {
	opts    Options
	mapper  meta.RESTMapper
	dynamic dynamic.Interface
	client  client.Client
	core    *auditor
}

// Setup adds the audit to mgr, to run on the leader only, and registers
// its metrics.
func Setup(mgr manager.Manager, opts Options) (*Audit, error) {
	if opts.Engines == nil {
		return nil, errors.New("the audit needs the policy engine")
	}
	opts = opts.withDefaults()
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := orv1.Install(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme, Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return nil, err
	}
	a := &Audit{opts: opts, mapper: mgr.GetRESTMapper(), dynamic: dyn, client: c}
	a.core = newAuditor(opts.Engines, nil, opts.EvaluationsPerSecond, opts.Log.WithName("audit"))
	a.core.limits = report.Limits{MaxBytes: opts.ReportMaxBytes, MaxReports: opts.ReportsPerObject}
	if !opts.NoEvents {
		a.core.events = newEventSender(mgr.GetEventRecorder(opts.Name), opts.EventsPerSecond)
	}
	if err := promreg.Replace(opts.Registerer, collector{a.core}); err != nil {
		return nil, fmt.Errorf("registering the audit's metrics: %w", err)
	}
	if err := mgr.Add(a); err != nil {
		return nil, err
	}
	return a, nil
}

// NeedLeaderElection is true: only the leader audits; its informers start with it.
func (a *Audit) NeedLeaderElection() bool { return true }

// Start watches the stored objects, judges them all, then keeps judging
// what changes until ctx ends.
func (a *Audit) Start(ctx context.Context) error {
	kinds, err := servedKinds(a.mapper)
	if err != nil {
		return err
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(a.dynamic, 0)
	var synced []cache.InformerSynced
	for i := range kinds {
		k := &kinds[i]
		k.informer = factory.ForResource(k.mapping.Resource).Informer()
		if err := k.informer.SetTransform(Compact); err != nil {
			return err
		}
		if _, err := k.informer.AddEventHandler(a.objectEvents(k.kind)); err != nil {
			return err
		}
		synced = append(synced, k.informer.HasSynced)
	}
	a.core.objects = informerObjects(kinds)
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer a.core.queue.ShutDown()
	a.startReports(ctx, &wg)
	if err := a.core.rebuild(); err != nil {
		return err
	}
	for range a.opts.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); a.core.work(ctx) }()
	}
	a.opts.Log.Info("auditing stored objects", "kinds", len(kinds), "objects", len(a.core.objects.Keys()), "reports", a.core.writer.Load() != nil)
	return a.loop(ctx, &wg)
}

// loop starts a full audit when the engine changes or the interval
// passes, and judges the cross-object rules again when what they read
// changed.
func (a *Audit) loop(ctx context.Context, wg *sync.WaitGroup) error {
	check := time.NewTicker(a.opts.CheckInterval)
	defer check.Stop()
	resync := time.NewTicker(a.opts.Interval)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-check.C:
			a.core.mu.Lock()
			stale := a.core.engine != a.opts.Engines.Engine()
			a.core.mu.Unlock()
			if stale {
				a.opts.Log.Info("configuration or policies reloaded: auditing every stored object again")
				if err := a.core.rebuild(); err != nil {
					return err
				}
				continue
			}
			a.core.requeueCrossObject()
		case <-resync.C:
			a.startReports(ctx, wg)
			a.core.startSweep()
		}
	}
}

// startReports turns the reports on once the openreports.io CRDs are
// installed: at the start, or at a later resync.
func (a *Audit) startReports(ctx context.Context, wg *sync.WaitGroup) {
	if a.opts.NoReports || a.core.writer.Load() != nil {
		return
	}
	m, served, err := reportsServed(a.mapper)
	if err != nil || !served {
		if err != nil {
			a.opts.Log.Error(err, "looking up the openreports.io CRDs")
		} else {
			a.opts.Log.Info("the openreports.io CRDs are not installed: audit results go to metrics and Events only until they are (see docs/audit.md)")
		}
		return
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(a.dynamic, 0, "", onlyKarpgateReports)
	inf := factory.ForResource(m.Resource).Informer()
	if err := inf.SetTransform(DigestReport); err != nil {
		a.opts.Log.Error(err, "watching ClusterReports")
		return
	}
	if err := inf.AddIndexers(cache.Indexers{byObjectIndex: indexByObject}); err != nil {
		a.opts.Log.Error(err, "indexing ClusterReports")
		return
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: a.reportDeleted})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	w := newWriter(a.client, informerReports{inf}, a.core.desire, a.opts.ReportWritesPerSecond, a.opts.Log.WithName("reports"))
	wg.Add(1)
	go func() { defer wg.Done(); w.work(ctx) }()
	go func() { <-ctx.Done(); w.queue.ShutDown() }()
	a.core.writer.Store(w)
}

// objectEvents queues an object when it appears, goes, or changes what
// the rules judge.
func (a *Audit) objectEvents(kind string) cache.ResourceEventHandler {
	add := func(obj any) {
		if s, ok := obj.(*Stored); ok {
			a.core.queue.Add(key(kind, s.Name))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: add,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*Stored)
			n, ok2 := newObj.(*Stored)
			if ok1 && ok2 && o.Judged == n.Judged {
				return
			}
			add(newObj)
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			add(obj)
		},
	}
}

// reportDeleted writes a report someone deleted again, if its object is
// still there.
func (a *Audit) reportDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	// The informer lists only the reports karpgate writes (report.Selector).
	if r, ok := obj.(*StoredReport); ok && r.Scope != nil {
		if _, exists := a.core.objects.Get(key(r.Scope.Kind, r.Scope.Name)); exists {
			a.core.queue.Add(key(r.Scope.Kind, r.Scope.Name))
		}
	}
}

// LastFullAudit is when the last full audit finished, how long it took
// and how many objects it judged; zero before the first.
func (a *Audit) LastFullAudit() (time.Time, time.Duration, int) {
	a.core.mu.Lock()
	defer a.core.mu.Unlock()
	return a.core.last.at, a.core.last.duration, a.core.last.objects
}
