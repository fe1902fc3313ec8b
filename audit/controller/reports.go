package controller

import (
	"context"
	"fmt"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"

	"github.com/karpgate/karpgate/audit"
	"github.com/karpgate/karpgate/audit/report"
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
	for _, r := range report.Build(v, engine.Catalog(), stamps(stored), now, a.limits).Parts {
		if r.Name == name {
			return r, nil
		}
	}
	return gone()
}

// stamps are the timestamps of an object's stored reports.
func stamps(stored []*StoredReport) report.Stamps {
	parts := make([]report.Stamps, len(stored))
	for i, r := range stored {
		parts[i] = r.Digest.Stamps
	}
	return report.MergeStamps(parts...)
}
