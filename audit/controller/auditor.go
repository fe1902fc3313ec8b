package controller

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/karpgate/karpgate/audit"
	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/policies"
)

// Engines hands out the engine to judge with; a reload swaps it.
type Engines interface {
	Engine() *policies.Engine
}

// objectSource is where the audit reads stored objects: its informers, or
// a test's map.
type objectSource interface {
	Get(key string) (*Stored, bool)
	Keys() []string
}

// reportSource is where it reads the reports stored.
type reportSource interface {
	Get(name string) (*StoredReport, bool)
	Names() []string
	// OfObject lists the reports scoped to the object with key k.
	OfObject(k string) []*StoredReport
}

// auditor is the audit without its informers: it judges objects from a
// source, keeps what it found, and hands reports to publish.
type auditor struct {
	engines Engines
	objects objectSource
	// writer writes the reports; nil while they are off (the CRDs are not
	// installed, or --audit-reports=false).
	writer  atomic.Pointer[writer]
	events  *eventSender
	now     func() time.Time
	limiter *rate.Limiter
	queue   workqueue.TypedRateLimitingInterface[string]
	log     logr.Logger
	// limits bound each object's reports.
	limits report.Limits

	mu        sync.Mutex
	engine    *policies.Engine
	inventory *audit.Inventory
	states    map[string]objectState
	// names maps the reports published to their objects' keys (a long
	// name's report name is a hash, and an object may have several); an
	// entry goes with its report.
	names map[string]string
	// spares are reports desire built ahead, by object key (see spare).
	spares map[string]spare
	sweep  *sweep
	// crossDirty: what the cross-object rules read changed since they
	// were last judged.
	crossDirty bool
	last       fullAudit
	completed  chan fullAudit // a test or benchmark waits on it
	counts     counts
}

// objectState is what the audit keeps of one object's verdict.
type objectState struct {
	kind     string
	findings map[ruleAction]int
	denials  map[string]bool // rule and path of each deny finding
	// reports the object's results take, and how many results they
	// leave out (see report.Limits); 0 while reports are off.
	reports, omitted int
}

type ruleAction struct{ rule, action string }

// sweep is a full audit under way: the keys not judged yet.
type sweep struct {
	started time.Time
	pending map[string]bool
}

// fullAudit is when a full audit finished and how long it took.
type fullAudit struct {
	at       time.Time
	duration time.Duration
	objects  int
}

// counts are the audit's running totals, for metrics.
type counts struct {
	evaluations, evaluationErrors int
}

func newAuditor(engines Engines, objects objectSource, evaluationsPerSecond float64, log logr.Logger) *auditor {
	return &auditor{
		engines: engines,
		objects: objects,
		now:     time.Now,
		limiter: rate.NewLimiter(rate.Limit(evaluationsPerSecond), max(1, int(evaluationsPerSecond/10))),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "karpgate-audit"}),
		log:       log,
		states:    map[string]objectState{},
		names:     map[string]string{},
		spares:    map[string]spare{},
		completed: make(chan fullAudit, 1),
	}
}

// rebuild starts over with the current engine: the inventory is indexed
// from every stored object before anything is judged, so that the
// cross-object rules never see a cluster half read, then a full audit
// starts.
func (a *auditor) rebuild() error {
	engine := a.engines.Engine()
	inv := audit.NewInventory(engine)
	for _, k := range a.objects.Keys() {
		s, ok := a.objects.Get(k)
		if !ok {
			continue
		}
		object, err := decode(s)
		if err != nil {
			return err
		}
		if _, err := inv.Set(k, object); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	a.mu.Lock()
	a.engine, a.inventory, a.crossDirty = engine, inv, false
	a.mu.Unlock()
	a.startSweep()
	return nil
}

// startSweep queues every stored object; the full audit finishes when each
// has been judged once.
func (a *auditor) startSweep() {
	keys := a.objects.Keys()
	s := &sweep{started: a.now(), pending: make(map[string]bool, len(keys))}
	for _, k := range keys {
		s.pending[k] = true
	}
	a.mu.Lock()
	a.sweep = s
	a.mu.Unlock()
	a.deleteOrphans(s.pending)
	if len(keys) == 0 {
		a.finish("")
	}
	for _, k := range keys {
		a.queue.Add(k)
	}
}

// deleteOrphans deletes the reports whose objects are gone: deleted while
// the audit was not running (Kubernetes' garbage collector deletes them
// too, through their owner reference; a report whose owner reference was
// removed is not).
func (a *auditor) deleteOrphans(keys map[string]bool) {
	w := a.writer.Load()
	if w == nil {
		return
	}
	for _, name := range w.reports.Names() {
		r, ok := w.reports.Get(name)
		if ok && (r.Scope == nil || !keys[key(r.Scope.Kind, r.Scope.Name)]) {
			w.publish(name) // unknown to names: the writer deletes it
		}
	}
}

// finish notes that key was judged, and finishes the full audit when it
// was the last.
func (a *auditor) finish(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sweep
	if s == nil {
		return
	}
	delete(s.pending, key)
	if len(s.pending) > 0 {
		return
	}
	now := a.now()
	a.last = fullAudit{at: now, duration: now.Sub(s.started), objects: len(a.states)}
	a.sweep = nil
	select {
	case a.completed <- a.last:
	default:
	}
	a.log.V(1).Info("full audit finished", "objects", a.last.objects, "duration", a.last.duration)
}

// markCrossObjectDirty notes that the cross-object rules must judge again.
func (a *auditor) markCrossObjectDirty() {
	a.mu.Lock()
	a.crossDirty = true
	a.mu.Unlock()
}

// requeueCrossObject queues the objects the cross-object rules judge, if
// what they read changed: many changes in a short time cost one pass.
func (a *auditor) requeueCrossObject() {
	a.mu.Lock()
	dirty, engine := a.crossDirty, a.engine
	a.crossDirty = false
	a.mu.Unlock()
	if !dirty || engine == nil {
		return
	}
	for _, k := range a.objects.Keys() {
		kind, _, _ := strings.Cut(k, "/")
		if engine.HasCrossObjectRules(kind, audit.Point) {
			a.queue.Add(k)
		}
	}
}

// reconcile judges one object and publishes what it found.
func (a *auditor) reconcile(ctx context.Context, k string) error {
	defer a.finish(k)
	a.dropSpare(k)
	a.mu.Lock()
	engine, inv := a.engine, a.inventory
	a.mu.Unlock()
	kind, name, _ := strings.Cut(k, "/")
	s, exists := a.objects.Get(k)
	if !exists {
		a.forget(k, kind, name, inv)
		return nil
	}
	if err := a.limiter.Wait(ctx); err != nil {
		return err
	}
	object, err := decode(s)
	if err != nil {
		return err
	}
	if changed, err := inv.Set(k, object); err != nil {
		return err
	} else if changed {
		a.markCrossObjectDirty()
	}
	now := a.now()
	v, err := audit.Judge(ctx, engine, inv.Current(), object, now)
	a.count(err)
	if err != nil {
		return fmt.Errorf("judging %s: %w", k, err)
	}
	w := a.writer.Load()
	if w == nil {
		a.remember(k, v, nil, nil, s)
		return nil
	}
	stored := w.reports.OfObject(k)
	desired := report.Build(v, engine.Catalog(), stamps(stored), now, a.limits)
	a.remember(k, v, &desired, stored, s)
	a.publishChanged(w, k, desired, stored)
	return nil
}

func (a *auditor) forget(k, kind, name string, inv *audit.Inventory) {
	if inv != nil && inv.Delete(k) {
		a.markCrossObjectDirty()
	}
	a.mu.Lock()
	delete(a.states, k)
	a.mu.Unlock()
	if w := a.writer.Load(); w != nil {
		a.publish(w, report.Name(kind, name), k)
		for _, r := range w.reports.OfObject(k) {
			a.publish(w, r.Name, k)
		}
	}
}

// remember keeps the verdict's counts and denials and the size of its
// reports (built: nil while reports are off), and sends an Event for each
// deny finding the object did not have before, and when its reports newly
// split or leave results out: as the audit last saw it, or, after a
// restart, as its stored reports say.
func (a *auditor) remember(k string, v audit.Verdict, built *report.Reports, stored []*StoredReport, s *Stored) {
	st := objectState{kind: v.Kind, findings: map[ruleAction]int{}, denials: map[string]bool{}}
	for _, f := range v.Findings {
		st.findings[ruleAction{f.RuleID, string(f.Action)}]++
		if f.Action == config.Deny {
			st.denials[report.DenialKey(f.RuleID, f.Path)] = true
		}
	}
	for _, f := range v.Waived {
		st.findings[ruleAction{f.RuleID, "waived"}]++
	}
	if built != nil {
		st.reports, st.omitted = len(built.Parts), built.OmittedCount()
	}
	a.mu.Lock()
	before, seen := a.states[k]
	a.states[k] = st
	a.mu.Unlock()
	if !seen && len(stored) > 0 {
		before.denials, before.reports = map[string]bool{}, len(stored)
		for _, r := range stored {
			maps.Copy(before.denials, r.Digest.Denials)
			before.omitted += r.Digest.Omitted
		}
	}
	if a.events == nil {
		return
	}
	for _, f := range v.Denials() {
		if !before.denials[report.DenialKey(f.RuleID, f.Path)] {
			a.events.denied(s, f)
		}
	}
	if built != nil && (st.omitted > 0 && before.omitted == 0 || st.reports > 1 && before.reports <= 1) {
		a.events.reportLimited(s, *built, a.limits)
	}
}

func (a *auditor) count(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counts.evaluations++
	if err != nil {
		a.counts.evaluationErrors++
	}
}

// work judges queued objects until the queue shuts down. An object whose
// judging fails is retried with backoff; the full audit counts it judged.
func (a *auditor) work(ctx context.Context) {
	for {
		k, shutdown := a.queue.Get()
		if shutdown {
			return
		}
		if err := a.reconcile(ctx, k); err != nil && ctx.Err() == nil {
			a.log.Error(err, "audit", "object", k)
			a.queue.AddRateLimited(k)
		} else {
			a.queue.Forget(k)
		}
		a.queue.Done(k)
	}
}

// decode reads an object as the admission webhook reads one (numbers kept
// as written), so that both judge the same values.
func decode(s *Stored) (map[string]any, error) {
	object, err := conversion.DecodeObject(s.Raw)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", s.Kind, s.Name, err)
	}
	return object, nil
}
