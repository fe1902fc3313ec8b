package controller

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"

	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/sandbox"
	"github.com/karpgate/karpgate/test/corpus"
)

var now = time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)

// mapObjects is a source of stored objects held in memory.
type mapObjects struct {
	mu sync.Mutex
	m  map[string]*Stored
}

func (o *mapObjects) Get(k string) (*Stored, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.m[k]
	return s, ok
}

func (o *mapObjects) Keys() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.m))
	for k := range o.m {
		out = append(out, k)
	}
	return out
}

func (o *mapObjects) put(t testing.TB, raw []byte) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	c, err := Compact(u)
	if err != nil {
		t.Fatal(err)
	}
	s := c.(*Stored)
	k := key(s.Kind, s.Name)
	o.mu.Lock()
	o.m[k] = s
	o.mu.Unlock()
	return k
}

// mapReports holds reports as a writer would have written them.
type mapReports struct {
	mu sync.Mutex
	m  map[string]*orv1.ClusterReport
}

func (r *mapReports) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for n := range r.m {
		out = append(out, n)
	}
	return out
}

func (r *mapReports) Get(name string) (*StoredReport, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep, ok := r.m[name]
	if !ok {
		return nil, false
	}
	return digested(rep), true
}

func (r *mapReports) OfObject(k string) []*StoredReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*StoredReport
	for _, rep := range r.m {
		if rep.Scope != nil && key(rep.Scope.Kind, rep.Scope.Name) == k {
			out = append(out, digested(rep))
		}
	}
	return out
}

// swappable is an Engines whose engine a test replaces, as a reload does.
type swappable struct {
	mu sync.Mutex
	e  *policies.Engine
}

func (s *swappable) Engine() *policies.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.e
}

func newEngine(t testing.TB, karpgateYAML string) *policies.Engine {
	t.Helper()
	return newEngineWithLimits(t, karpgateYAML, sandbox.Limits{})
}

// newEngineWithLimits is newEngine with the sandbox's limits; zero fields
// are the defaults.
func newEngineWithLimits(t testing.TB, karpgateYAML string, limits sandbox.Limits) *policies.Engine {
	t.Helper()
	cfg, err := config.Parse("karpgate.yaml", []byte(karpgateYAML))
	if err != nil {
		t.Fatal(err)
	}
	e, err := policies.New(context.Background(), policies.Options{Config: cfg, Now: func() time.Time { return now }, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// runSweep judges every queued object with one worker and waits for the
// full audit to finish.
func runSweep(t testing.TB, a *auditor) fullAudit {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.work(ctx); close(done) }()
	var got fullAudit
	select {
	case got = <-a.completed:
	case <-time.After(time.Minute):
		t.Fatal("the full audit did not finish")
	}
	cancel()
	a.queue.ShutDown()
	<-done
	return got
}

func newTestAuditor(_ testing.TB, engines Engines, objects objectSource) *auditor {
	a := newAuditor(engines, objects, 1e9, logr.Discard())
	a.limiter = rate.NewLimiter(rate.Inf, 1)
	a.now = func() time.Time { return now }
	return a
}

// TestSwitchingARuleToDenyIsReportedWithoutTouchingObjects: a rule switched
// to deny fails the reports of the objects that break it, is counted, and
// sends one Event per object; a second audit with nothing changed writes
// nothing and sends nothing.
func TestSwitchingARuleToDenyIsReportedWithoutTouchingObjects(t *testing.T) {
	objects := &mapObjects{m: map[string]*Stored{}}
	for _, raw := range corpus.StoredCluster(14, 3, 2) { // class-6 and class-13: dev, @latest (KG102)
		objects.put(t, raw)
	}
	engines := &swappable{e: newEngine(t, "")}
	stored := &mapReports{m: map[string]*orv1.ClusterReport{}}
	var published []string
	recorder := events.NewFakeRecorder(100)
	audit := func() {
		a := newTestAuditor(t, engines, objects)
		w := newWriter(nil, stored, a.desire, 1, logr.Discard())
		a.writer.Store(w)
		a.events = newEventSender(recorder, 100)
		if err := a.rebuild(); err != nil {
			t.Fatal(err)
		}
		runSweep(t, a)
		published = drain(t, w, stored)
		lastRegistry = prometheus.NewRegistry()
		lastRegistry.MustRegister(collector{a})
	}
	audit()
	if len(published) != 19 {
		t.Fatalf("first audit published %d reports, want one per object (19)", len(published))
	}
	if got := stored.m["karpgate-ec2nodeclass-class-6"].Summary; got.Warn != 1 || got.Fail != 0 {
		t.Fatalf("class-6 before: %+v", got)
	}
	if n := len(recorder.Events); n != 0 {
		t.Fatalf("%d events without a deny rule", n)
	}

	engines.mu.Lock()
	engines.e = newEngine(t, "rules:\n  KG102: {severity: deny}\n")
	engines.mu.Unlock()
	audit()
	if strings.Join(published, " ") != "karpgate-ec2nodeclass-class-13 karpgate-ec2nodeclass-class-6" {
		t.Fatalf("after the switch to deny published %v, want only the two reports that changed", published)
	}
	if got := stored.m["karpgate-ec2nodeclass-class-6"].Summary; got.Fail != 1 || got.Warn != 0 {
		t.Fatalf("class-6 after: %+v", got)
	}
	if n := len(recorder.Events); n != 2 {
		t.Fatalf("%d events, want one per object that newly breaks a deny rule (2)", n)
	}
	if e := <-recorder.Events; !strings.Contains(e, "Warning PolicyViolation KG102 spec.amiSelectorTerms[0].alias") {
		t.Errorf("event %q", e)
	}
	<-recorder.Events
	if err := testutil.GatherAndCompare(lastRegistry, strings.NewReader(`
# HELP karpgate_audit_findings Findings on the stored objects as the last audit of each found them, by rule and action (deny, warn, audit, or waived by an annotation).
# TYPE karpgate_audit_findings gauge
karpgate_audit_findings{action="deny",rule="KG102"} 2
`), "karpgate_audit_findings"); err != nil {
		t.Error(err)
	}

	// Nothing changed: nothing to write, and no Event again (the stored
	// reports say the denials were already known, as after a restart).
	audit()
	if len(published) != 0 || len(recorder.Events) != 0 {
		t.Fatalf("an unchanged audit published %v and sent %d events", published, len(recorder.Events))
	}

	// Fixing the object clears its failing entry.
	fixed := corpus.StoredCluster(14, 0, 0)[6]
	fixed = []byte(strings.Replace(string(fixed), "al2023@latest", "al2023@v20240807", 1))
	objects.put(t, fixed)
	audit()
	if got := stored.m["karpgate-ec2nodeclass-class-6"].Summary; got.Fail != 0 || got.Warn != 0 || len(published) != 1 {
		t.Fatalf("after the fix: %+v, published %v", got, published)
	}

	// An object deleted while the audit was not running: its report goes.
	objects.mu.Lock()
	delete(objects.m, "EC2NodeClass/class-13")
	objects.mu.Unlock()
	audit()
	if _, exists := stored.m["karpgate-ec2nodeclass-class-13"]; exists || !slices.Equal(published, []string{"karpgate-ec2nodeclass-class-13"}) {
		t.Fatalf("the report of a deleted object: published %v", published)
	}
	if err := testutil.GatherAndCompare(lastRegistry, strings.NewReader(`
# HELP karpgate_audit_findings Findings on the stored objects as the last audit of each found them, by rule and action (deny, warn, audit, or waived by an annotation).
# TYPE karpgate_audit_findings gauge
`), "karpgate_audit_findings"); err != nil {
		t.Error(err)
	}
}

var lastRegistry *prometheus.Registry

func roundTrip(t testing.TB, r *orv1.ClusterReport) *orv1.ClusterReport {
	t.Helper()
	if r == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out orv1.ClusterReport
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// drain does the writer's work on stored, as if the API server took each
// write, and returns the reports written, sorted.
func drain(t testing.TB, w *writer, stored *mapReports) []string {
	t.Helper()
	var written []string
	for w.queue.Len() > 0 {
		name, _ := w.queue.Get()
		r, err := w.desire(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		prev, exists := stored.Get(name)
		switch {
		case r == nil && exists:
			delete(stored.m, name)
			written = append(written, name)
		case r != nil && (!exists || prev.Digest.Content != report.Fingerprint(r)):
			stored.m[name] = roundTrip(t, r)
			written = append(written, name)
		}
		w.queue.Done(name)
	}
	slices.Sort(written)
	return written
}
