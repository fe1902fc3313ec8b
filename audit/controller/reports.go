package controller

import (
	"context"
	"fmt"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"

	"github.com/karpgate/karpgate/audit"
	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/policies"
)

// publishChanged queues the writes an object's reports need: each part
// whose stored report says something else, and each stored part the
// object no longer needs (desire deletes it).
func (a *auditor) publishChanged(w *writer, k string, desired report.Reports, stored []*StoredReport) {
	want := map[string]bool{}
	for _, r := range desired.Parts {
		want[r.Name] = true
		if have, ok := w.reports.Get(r.Name); !ok || have.Digest.Content != report.Fingerprint(r) {
			a.publish(w, r.Name, k)
		}
	}
	for _, r := range stored {
		if !want[r.Name] {
			a.publish(w, r.Name, k)
		}
	}
}

// publish queues a report's write, remembering its object.
func (a *auditor) publish(w *writer, name, k string) {
	a.mu.Lock()
	a.names[name] = k
	a.mu.Unlock()
	w.publish(name)
}

// desire builds what report name should say now, for the writer: the
// object's verdict as of now, or nil when the object is gone, no longer
// needs that report, or the report is not one of the audit's objects.
func (a *auditor) desire(ctx context.Context, name string) (*orv1.ClusterReport, error) {
	a.mu.Lock()
	k, known := a.names[name]
	engine, inv := a.engine, a.inventory
	a.mu.Unlock()
	gone := func() (*orv1.ClusterReport, error) {
		a.mu.Lock()
		delete(a.names, name)
		a.mu.Unlock()
		return nil, nil
	}
	s, exists := a.objects.Get(k)
	if !known || !exists {
		return gone()
	}
	if r, ok := a.takeSpare(k, name, s, engine); ok {
		return r, nil
	}
	object, err := decode(s)
	if err != nil {
		return nil, err
	}
	now := a.now()
	v, err := audit.Judge(ctx, engine, inv.Current(), object, now)
	if err != nil {
		return nil, fmt.Errorf("judging %s: %w", k, err)
	}
	var stored []*StoredReport
	if w := a.writer.Load(); w != nil {
		stored = w.reports.OfObject(k)
	}
	built := report.Build(v, engine.Catalog(), stamps(stored), now, a.limits)
	var want *orv1.ClusterReport
	for _, r := range built.Parts {
		if r.Name == name {
			want = r
		}
	}
	// Kept from when the judging ended, not from the instant the object
	// was judged at: on a slow machine judging ten thousand waivers may
	// take longer than spareFor itself, and every part would judge again.
	a.keepSpare(k, name, s, engine, a.now(), built)
	if want == nil {
		return gone()
	}
	return want, nil
}

// spareFor is how long desire keeps the other reports of an object whose
// results take several.
const spareFor = 10 * time.Second

// spare are the reports desire built for an object besides the one it
// was asked for: the writer writes an object's reports one after the
// other, and each would judge the object again (seconds for one with
// ten thousand waivers). They serve only while the object and engine are
// the same, for spareFor, and until the object is judged again
// (reconcile drops them: what the cross-object rules read may have
// changed).
type spare struct {
	object *Stored
	engine *policies.Engine
	built  time.Time
	parts  map[string]*orv1.ClusterReport
}

func (a *auditor) keepSpare(k, name string, s *Stored, engine *policies.Engine, now time.Time, built report.Reports) {
	if len(built.Parts) < 2 {
		return
	}
	sp := spare{object: s, engine: engine, built: now, parts: map[string]*orv1.ClusterReport{}}
	for _, r := range built.Parts {
		if r.Name != name {
			sp.parts[r.Name] = r
		}
	}
	a.mu.Lock()
	a.spares[k] = sp
	a.mu.Unlock()
}

func (a *auditor) takeSpare(k, name string, s *Stored, engine *policies.Engine) (*orv1.ClusterReport, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sp, ok := a.spares[k]
	if !ok {
		return nil, false
	}
	r, ok := sp.parts[name]
	if !ok || sp.object != s || sp.engine != engine || a.now().Sub(sp.built) >= spareFor {
		delete(a.spares, k)
		return nil, false
	}
	delete(sp.parts, name)
	if len(sp.parts) == 0 {
		delete(a.spares, k)
	}
	return r, true
}

// dropSpare forgets the spare reports of an object about to be judged.
func (a *auditor) dropSpare(k string) {
	a.mu.Lock()
	delete(a.spares, k)
	a.mu.Unlock()
}

// stamps are the timestamps of an object's stored reports.
func stamps(stored []*StoredReport) report.Stamps {
	parts := make([]report.Stamps, len(stored))
	for i, r := range stored {
		parts[i] = r.Digest.Stamps
	}
	return report.MergeStamps(parts...)
}
