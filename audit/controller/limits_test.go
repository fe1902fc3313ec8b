package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/tools/events"

	"github.com/karpgate/karpgate/audit/report"
)

// waiverKey is the annotation of the i-th waiver of a rule that does not
// exist: 24 bytes, the same for every i.
func waiverKey(i int) string { return fmt.Sprintf("karpgate.io/waive-X%05d", i) }

// nodePoolWithWaivers is a NodePool with n waivers of rules that do not
// exist (KG002 each; and, without a reason, KG001 too) and a budget
// schedule Karpenter cannot parse (KG201, a denial).
func nodePoolWithWaivers(t testing.TB, name string, n int, reason string) []byte {
	t.Helper()
	annotations := map[string]string{}
	for i := range n {
		annotations[waiverKey(i)] = reason
	}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": name, "annotations": annotations},
		"spec": map[string]any{
			"template": map[string]any{"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}}},
			}},
			"disruption": map[string]any{"budgets": []any{map[string]any{"nodes": "10%", "schedule": "0 9 * * sat-sun", "duration": "8h"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestResultsThatDoNotFitOneReport: an object whose results outgrow a
// report gets more, up to ReportsPerObject, and its first report counts
// what is left out; an Event says so once and the metrics count it; its
// denial is listed; when the object shrinks, the parts it no longer needs
// are deleted; denials that alone outgrow the limit take more reports.
func TestResultsThatDoNotFitOneReport(t *testing.T) {
	objects := &mapObjects{m: map[string]*Stored{}}
	engines := &swappable{e: newEngine(t, "")}
	stored := &mapReports{m: map[string]*orv1.ClusterReport{}}
	recorder := events.NewFakeRecorder(2000) // a full channel blocks the sender
	limits := report.Limits{MaxBytes: report.MinMaxBytes, MaxReports: 2}
	var published []string
	audit := func() *prometheus.Registry {
		a := newTestAuditor(t, engines, objects)
		a.limits = limits
		w := newWriter(nil, stored, a.desire, 1, logr.Discard())
		a.writer.Store(w)
		a.events = newEventSender(recorder, 100)
		if err := a.rebuild(); err != nil {
			t.Fatal(err)
		}
		runSweep(t, a)
		published = drain(t, w, stored)
		r := prometheus.NewRegistry()
		r.MustRegister(collector{a})
		return r
	}
	metrics := func(r *prometheus.Registry, want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(r, strings.NewReader(want), "karpgate_audit_oversized_objects", "karpgate_audit_omitted_results"); err != nil {
			t.Error(err)
		}
	}
	// What the object's stored reports list: denials, results in all (the
	// omitted-results entry aside), and what the first says is omitted.
	listed := func() (denials, results, omitted int, names []string) {
		for _, name := range []string{"karpgate-nodepool-web", "karpgate-nodepool.2-web", "karpgate-nodepool.3-web", "karpgate-nodepool.4-web",
			"karpgate-nodepool.5-web", "karpgate-nodepool.6-web", "karpgate-nodepool.7-web"} {
			r, ok := stored.m[name]
			if !ok {
				continue
			}
			names = append(names, name)
			for _, res := range r.Results {
				switch {
				case res.Policy == report.OmittedPolicy:
					omitted = report.DigestOf(r).Omitted
				case res.Result == "fail":
					denials++
					results++
				default:
					results++
				}
			}
		}
		return denials, results, omitted, names
	}

	// 600 waivers without a reason: 1,200 findings, about 480 KiB.
	objects.put(t, nodePoolWithWaivers(t, "web", 600, ""))
	reg := audit()
	denials, results, omitted, names := listed()
	if strings.Join(published, " ") != "karpgate-nodepool-web karpgate-nodepool.2-web" || strings.Join(names, " ") != "karpgate-nodepool-web karpgate-nodepool.2-web" {
		t.Fatalf("published %v, stored %v; want two reports", published, names)
	}
	if denials != 1 || omitted == 0 || results+omitted != 1+1200+stored.m["karpgate-nodepool-web"].Summary.Pass+stored.m["karpgate-nodepool.2-web"].Summary.Pass {
		t.Errorf("listed %d denials and %d results, %d omitted; want the denial and the rest listed or counted", denials, results, omitted)
	}
	if n := len(recorder.Events); n != 2 {
		t.Fatalf("%d events, want the denial's and the truncation's", n)
	}
	if e := <-recorder.Events; !strings.HasPrefix(e, "Warning PolicyViolation KG201") {
		t.Errorf("event %q", e)
	}
	if e := <-recorder.Events; !strings.HasPrefix(e, fmt.Sprintf("Warning ReportTruncated karpgate's audit left %d results out of this object's ClusterReports (karpgate-nodepool-web, karpgate-nodepool.2-web)", omitted)) {
		t.Errorf("event %q", e)
	}
	metrics(reg, fmt.Sprintf(`
# HELP karpgate_audit_omitted_results Results left out of the ClusterReports (never a denial), as the last audit of each object found them, by kind; the first report of each such object counts them by rule.
# TYPE karpgate_audit_omitted_results gauge
karpgate_audit_omitted_results{kind="NodePool"} %d
# HELP karpgate_audit_oversized_objects Objects whose results do not fit one ClusterReport (--audit-report-max-bytes), as the last audit of each found them, by kind and outcome: split (over several reports) or truncated (results other than denials left out past --audit-reports-per-object).
# TYPE karpgate_audit_oversized_objects gauge
karpgate_audit_oversized_objects{kind="NodePool",outcome="split"} 1
karpgate_audit_oversized_objects{kind="NodePool",outcome="truncated"} 1
`, omitted))

	// Nothing changed, and a new audit (a restart): nothing written, no
	// Event (the stored reports say it all already).
	audit()
	if len(published) != 0 || len(recorder.Events) != 0 {
		t.Fatalf("an unchanged audit published %v and sent %d events", published, len(recorder.Events))
	}

	// Fewer waivers: one report again, the second deleted.
	objects.put(t, nodePoolWithWaivers(t, "web", 20, "migration"))
	reg = audit()
	if denials, _, omitted, names := listed(); strings.Join(names, " ") != "karpgate-nodepool-web" || denials != 1 || omitted != 0 {
		t.Fatalf("after the fix: reports %v, %d denials, %d omitted", names, denials, omitted)
	}
	metrics(reg, `
# HELP karpgate_audit_omitted_results Results left out of the ClusterReports (never a denial), as the last audit of each object found them, by kind; the first report of each such object counts them by rule.
# TYPE karpgate_audit_omitted_results gauge
karpgate_audit_omitted_results{kind="NodePool"} 0
# HELP karpgate_audit_oversized_objects Objects whose results do not fit one ClusterReport (--audit-report-max-bytes), as the last audit of each found them, by kind and outcome: split (over several reports) or truncated (results other than denials left out past --audit-reports-per-object).
# TYPE karpgate_audit_oversized_objects gauge
karpgate_audit_oversized_objects{kind="NodePool",outcome="split"} 0
karpgate_audit_oversized_objects{kind="NodePool",outcome="truncated"} 0
`)

	// Unknown waivers made denials: 1,000 of them outgrow two reports,
	// and take as many as they need.
	engines.mu.Lock()
	engines.e = newEngine(t, "rules:\n  KG002: {severity: deny}\n")
	engines.mu.Unlock()
	objects.put(t, nodePoolWithWaivers(t, "web", 1000, "migration"))
	audit()
	denials, _, _, names = listed()
	if denials != 1001 || len(names) <= limits.MaxReports {
		t.Fatalf("%d denials listed in %v, want all 1001 in more than %d reports", denials, names, limits.MaxReports)
	}
}

// TestAnObjectsReportsAreBuiltOnceForAllParts: the writer asks for an
// object's reports one by one; the first judges the object and the others
// are its spares, unless the object changed or was judged again since.
func TestAnObjectsReportsAreBuiltOnceForAllParts(t *testing.T) {
	objects := &mapObjects{m: map[string]*Stored{}}
	objects.put(t, nodePoolWithWaivers(t, "web", 600, ""))
	a := newTestAuditor(t, &swappable{e: newEngine(t, "")}, objects)
	a.limits = report.Limits{MaxBytes: report.MinMaxBytes, MaxReports: 3}
	w := newWriter(nil, &mapReports{m: map[string]*orv1.ClusterReport{}}, a.desire, 1, logr.Discard())
	a.writer.Store(w)
	if err := a.rebuild(); err != nil {
		t.Fatal(err)
	}
	runSweep(t, a)
	const k, first, second = "NodePool/web", "karpgate-nodepool-web", "karpgate-nodepool.2-web"
	desire := func(name string) *orv1.ClusterReport {
		t.Helper()
		r, err := a.desire(t.Context(), name)
		if err != nil || r == nil {
			t.Fatalf("%s: %v, %v", name, r, err)
		}
		return r
	}
	spare := func(name string) *orv1.ClusterReport { return a.spares[k].parts[name] }

	desire(first)
	kept := spare(second)
	if kept == nil || desire(second) != kept {
		t.Fatalf("%s was not handed out from the spares of %s", second, first)
	}
	if spare("karpgate-nodepool.3-web") == nil {
		t.Fatal("the third part is not spare any more")
	}

	// The object changes before its next part is written: built anew.
	desire(first)
	kept = spare(second)
	objects.put(t, nodePoolWithWaivers(t, "web", 700, ""))
	if desire(second) == kept {
		t.Fatal("a part built before the object changed was handed out")
	}
	// Judged again: the spares go.
	desire(first)
	if err := a.reconcile(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	if len(a.spares) != 0 {
		t.Fatal("spares kept past a new judgement")
	}

	// Judging that takes longer than spareFor (ten thousand waivers on a
	// busy machine): the spares are kept from when it ended.
	times := []time.Time{now, now.Add(spareFor + time.Second), now.Add(spareFor + 2*time.Second)}
	a.now = func() time.Time {
		next := times[0]
		if len(times) > 1 {
			times = times[1:]
		}
		return next
	}
	desire(first)
	kept = spare(second)
	if kept == nil || desire(second) != kept {
		t.Fatalf("%s was judged again because judging %s took longer than spareFor", second, first)
	}
}
