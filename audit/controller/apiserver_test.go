package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	orv1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	eventsv1 "k8s.io/api/events/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/karpgate/karpgate/audit"
	auditcontroller "github.com/karpgate/karpgate/audit/controller"
	"github.com/karpgate/karpgate/audit/report"
	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/policies/sandbox"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/wait"
)

// etcdMaxRequestBytes is etcd's default --max-request-bytes, which the test
// control plane keeps.
const etcdMaxRequestBytes = 1536 << 10

// TestReportsFitTheAPIServer writes NodePools with as many waivers of rules
// that do not exist as a real API server stores, and shows: how many one
// NodePool can carry (its annotations may take 256 KiB); how many make one
// report holding every result, as the audit wrote before its reports were
// limited, too big to store (the write failed and was retried forever,
// and the NodePool's denial never appeared); and that the audit now
// writes reports for 2,000 of them and for as many as a NodePool carries,
// with the denial listed, an Event and the metrics saying what did not
// fit.
func TestReportsFitTheAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1, crdsource.OpenReports))
	ctx := t.Context()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, orv1.Install} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	create := func(raw []byte, opts ...client.CreateOption) error {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			t.Fatal(err)
		}
		return c.Create(ctx, u, opts...)
	}

	// Each waiver takes 24 bytes of the 256 KiB all annotations may take.
	most := apivalidation.TotalAnnotationSizeLimitB / len(auditcontroller.WaiverKey(0))
	if err := create(auditcontroller.NodePoolWithWaivers(t, "too-many", most+1, ""), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "metadata.annotations: Too long") {
		t.Fatalf("a NodePool with %d waivers: %v; want the API server to refuse its annotations", most+1, err)
	}
	t.Logf("a NodePool carries at most %d waivers of 24 bytes (%d bytes of annotations)", most, most*len(auditcontroller.WaiverKey(0)))

	// The report of every result, in one, as the audit wrote it before:
	// the fewest waivers that make it too big to store. Its size grows by
	// the same bytes with each waiver, so two sizes place the limit; the
	// API server then says exactly where it is.
	// A NodePool with the most waivers takes about 2.5 s to judge on a
	// busy machine, many times that under the race detector: the sandbox's
	// 10 s would make this test of report sizes a test of the machine.
	engine := auditcontroller.NewEngineWithLimits(t, "", sandbox.Limits{MaxEvaluationTime: time.Hour})
	unlimited := report.Limits{MaxBytes: 1 << 40, MaxReports: 1}
	for _, reason := range []string{"", "migration"} {
		build := func(n int) *orv1.ClusterReport {
			object, err := conversion.DecodeObject(auditcontroller.NodePoolWithWaivers(t, "breaking", n, reason))
			if err != nil {
				t.Fatal(err)
			}
			v, err := audit.Judge(ctx, engine, nil, object, auditcontroller.Now)
			if err != nil {
				t.Fatal(err)
			}
			return report.Build(v, engine.Catalog(), nil, auditcontroller.Now, unlimited).Parts[0]
		}
		size := func(r *orv1.ClusterReport) int {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			return len(b)
		}
		type outcome struct {
			refused bool
			bytes   int
			err     error
		}
		tried := map[int]outcome{}
		refused := func(n int) (bool, int, error) {
			if o, ok := tried[n]; ok {
				return o.refused, o.bytes, o.err
			}
			r := build(n)
			o := outcome{bytes: size(r)}
			if o.err = c.Create(ctx, r); o.err != nil {
				o.refused = true
			} else {
				o.err = c.Delete(ctx, r)
			}
			tried[n] = o
			return o.refused, o.bytes, o.err
		}
		s10, s20 := size(build(10)), size(build(20))
		perWaiver := (s20 - s10) / 10
		n := (etcdMaxRequestBytes-s10)/perWaiver + 10 + 1
		for {
			failed, _, err := refused(n)
			if !failed && err != nil {
				t.Fatal(err)
			}
			if failed || n >= most {
				break
			}
			n++
		}
		for n > 1 {
			if failed, _, _ := refused(n - 1); !failed {
				break
			}
			n--
		}
		failed, bytes, err := refused(n)
		if !failed {
			t.Fatalf("reason %q: the report of %d waivers was stored", reason, n)
		}
		t.Logf("reason %q: %d bytes a waiver; one report of every result is stored up to %d waivers; at %d it takes %d bytes and the API server says: %v",
			reason, perWaiver, n-1, n, bytes, err)
		if reason == "" && n > 2000 {
			t.Errorf("2,000 waivers without a reason made a report that fits: the audit below does not show the limit")
		}
	}

	// The audit, as serve runs it, over two NodePools: 2,000 waivers
	// without a reason (4,000 findings), and as many as a NodePool takes.
	pools := map[string]int{"waivers-2000": 2000, "waivers-most": most}
	for name, n := range pools {
		if err := create(auditcontroller.NodePoolWithWaivers(t, name, n, "")); err != nil {
			t.Fatalf("creating NodePool %s: %v", name, err)
		}
	}
	registry := prometheus.NewRegistry()
	mgr, err := manager.New(env.Config, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auditcontroller.Setup(mgr, auditcontroller.Options{Engines: auditcontroller.NewStaticEngines(engine), Registerer: registry, ReportWritesPerSecond: 100, CheckInterval: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	mgrCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	// Per NodePool: the reports it takes and the Event that says so.
	want := map[string]struct {
		reports int
		reason  string
	}{
		"waivers-2000": {2, auditcontroller.ReasonReportSplit},
		"waivers-most": {report.DefaultMaxReports, auditcontroller.ReasonReportTruncated},
	}
	// Listing megabytes of reports costs: wait for their writes first.
	// Judging a NodePool with the most waivers takes minutes under the race
	// detector on a busy machine, so the wait lasts while the audit judges
	// and writes, and ends when it stops doing either.
	wait.ForProgress(t, "the reports written", func() (float64, error) {
		total := 0
		for _, w := range want {
			total += w.reports
		}
		families, err := registry.Gather()
		if err != nil {
			return 0, err
		}
		var evaluations, created float64
		var counts []string
		for _, f := range families {
			for _, m := range f.GetMetric() {
				l := labelsOf(m)
				switch f.GetName() {
				case "karpgate_audit_evaluations_total":
					evaluations += m.GetCounter().GetValue()
					counts = append(counts, fmt.Sprintf("evaluations %v: %v", l, m.GetCounter().GetValue()))
				case "karpgate_audit_report_writes_total":
					if l["operation"] == "create" && l["result"] == "ok" {
						created = m.GetCounter().GetValue()
					}
					counts = append(counts, fmt.Sprintf("writes %v: %v", l, m.GetCounter().GetValue()))
				}
			}
		}
		if int(created) >= total {
			return 0, nil
		}
		return evaluations + created, fmt.Errorf("%v of %d reports created (%s)", created, total, strings.Join(counts, "; "))
	})
	omittedInAll := 0
	wait.ForNoError(t, "the NodePools' reports, with their denial", func() error {
		var list orv1.ClusterReportList
		if err := c.List(ctx, &list, client.MatchingLabels(report.Selector)); err != nil {
			return err
		}
		omittedInAll = 0
		for name, n := range pools {
			var names []string
			var denials, results, omitted int
			var summary orv1.ReportSummary
			for _, r := range list.Items {
				if r.Scope == nil || r.Scope.Name != name {
					continue
				}
				names = append(names, r.Name)
				summary.Fail, summary.Warn, summary.Pass = summary.Fail+r.Summary.Fail, summary.Warn+r.Summary.Warn, summary.Pass+r.Summary.Pass
				for _, res := range r.Results {
					switch {
					case res.Policy == report.OmittedPolicy:
						omitted = report.DigestOf(&r).Omitted
					case res.Result == "fail" && res.Policy == "KG201":
						denials++
						results++
					default:
						results++
					}
				}
			}
			slices.Sort(names)
			wantNames := []string{report.Name("NodePool", name)}
			for i := 2; i <= want[name].reports; i++ {
				wantNames = append(wantNames, report.PartName("NodePool", name, i))
			}
			slices.Sort(wantNames)
			if denials != 1 || summary.Fail != 1 || summary.Warn != 2*n || !slices.Equal(names, wantNames) {
				return fmt.Errorf("NodePool %s: reports %v (want %v) list %d KG201 denials and %d results (%d omitted), summaries %+v; want the denial and %d warnings",
					name, names, wantNames, denials, results, omitted, summary, 2*n)
			}
			if results+omitted != 1+2*n+summary.Pass {
				return fmt.Errorf("NodePool %s: %d results listed and %d omitted, want %d", name, results, omitted, 1+2*n+summary.Pass)
			}
			omittedInAll += omitted
		}
		return nil
	})
	if omittedInAll == 0 {
		t.Fatal("nothing left out of the reports of the NodePool with the most waivers")
	}

	wait.ForNoError(t, "an Event on each NodePool", func() error {
		var list eventsv1.EventList
		if err := c.List(ctx, &list); err != nil {
			return err
		}
		for name, w := range want {
			found := false
			for _, e := range list.Items {
				found = found || e.Regarding.Kind == "NodePool" && e.Regarding.Name == name && e.Reason == w.reason && e.Type == "Warning"
			}
			if !found {
				return fmt.Errorf("no %s Event on NodePool %s", w.reason, name)
			}
		}
		return nil
	})
	if err := testutil.GatherAndCompare(registry, strings.NewReader(fmt.Sprintf(`
# HELP karpgate_audit_omitted_results Results left out of the ClusterReports (never a denial), as the last audit of each object found them, by kind; the first report of each such object counts them by rule.
# TYPE karpgate_audit_omitted_results gauge
karpgate_audit_omitted_results{kind="NodePool"} %d
# HELP karpgate_audit_oversized_objects Objects whose results do not fit one ClusterReport (--audit-report-max-bytes), as the last audit of each found them, by kind and outcome: split (over several reports) or truncated (results other than denials left out past --audit-reports-per-object).
# TYPE karpgate_audit_oversized_objects gauge
karpgate_audit_oversized_objects{kind="NodePool",outcome="split"} 2
karpgate_audit_oversized_objects{kind="NodePool",outcome="truncated"} 1
`, omittedInAll)), "karpgate_audit_oversized_objects", "karpgate_audit_omitted_results"); err != nil {
		t.Error(err)
	}
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
