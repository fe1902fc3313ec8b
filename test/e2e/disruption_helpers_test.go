package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/background"
	"github.com/karpgate/karpgate/test/testenv"
)

// createWithStatus creates each object, then writes the status it was given
// through the status subresource, as Karpenter and the kubelet do.
func createWithStatus(t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	for _, want := range objs {
		obj := want.DeepCopy()
		status, hasStatus := obj.Object["status"]
		delete(obj.Object, "status")
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if !hasStatus {
			continue
		}
		obj.Object["status"] = status
		if err := c.Status().Update(ctx, obj); err != nil {
			t.Fatalf("writing the status of %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

func readObjects(t *testing.T, parts ...string) []*unstructured.Unstructured {
	t.Helper()
	path := strings.Join(append([]string{"..", "testdata"}, parts...), "/")
	docs, err := manifest.ReadAll([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, len(docs))
	for i, d := range docs {
		out[i] = &unstructured.Unstructured{Object: d.Content}
	}
	return out
}

// setCondition sets (or replaces) a NodeClaim status condition.
func setCondition(t *testing.T, c client.Client, name, typ, status, reason string, at time.Time) {
	t.Helper()
	nc := &unstructured.Unstructured{}
	nc.SetAPIVersion("karpenter.sh/v1")
	nc.SetKind("NodeClaim")
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, nc); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
	cond := map[string]any{"type": typ, "status": status, "reason": reason, "message": "", "lastTransitionTime": at.UTC().Format(time.RFC3339)}
	replaced := false
	for i, c := range conds {
		if c.(map[string]any)["type"] == typ {
			conds[i], replaced = cond, true
		}
	}
	if !replaced {
		conds = append(conds, cond)
	}
	if err := unstructured.SetNestedSlice(nc.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(context.Background(), nc); err != nil {
		t.Fatalf("setting %s=%s on NodeClaim %s: %v", typ, status, name, err)
	}
}

// runningLoop is a manager with the disruption loop, stopped at most once.
type runningLoop struct {
	loop *controller.Loop
	stop func()
}

func startLoop(t *testing.T, env *testenv.Env, mgrOpts manager.Options, opts controller.Options) *runningLoop {
	t.Helper()
	mgrOpts.Metrics = metricsserver.Options{BindAddress: "0"}
	mgrOpts.HealthProbeBindAddress = "0"
	mgr, err := manager.New(env.Config, mgrOpts)
	if err != nil {
		t.Fatal(err)
	}
	loop, err := controller.Setup(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	run := background.Start(t, "manager "+opts.Name, mgr.Start)
	return &runningLoop{loop: loop, stop: run.Stop}
}

// poolEvents lists "nodepool reason" for the events a controller emitted,
// sorted; repeats the API merged into a series count once.
func poolEvents(t *testing.T, c client.Client, reportingController string) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.ReportingController == reportingController && e.Regarding.Kind == "NodePool" {
			out = append(out, e.Regarding.Name+" "+e.Reason)
		}
	}
	sort.Strings(out)
	return out
}

// eventsAbout keeps the events of poolEvents that regard one NodePool. A
// test on a real clock keeps to its own NodePool: the shared ones have budget
// windows that open and close with the time of day the test runs at.
func eventsAbout(pool string, events []string) []string {
	var out []string
	for _, e := range events {
		if strings.HasPrefix(e, pool+" ") {
			out = append(out, e)
		}
	}
	return out
}

func eventNote(t *testing.T, c client.Client, reportingController, pool, reason string) string {
	t.Helper()
	var list eventsv1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.ReportingController == reportingController && e.Regarding.Name == pool && e.Reason == reason {
			return e.Note
		}
	}
	return ""
}

func sameEvents(want []string, got []string) error {
	sort.Strings(want)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		return fmt.Errorf("events = %q, want %q", got, want)
	}
	return nil
}

// karpgateSeries counts the karpgate_ series a registry holds.
func karpgateSeries(t *testing.T, g prometheus.Gatherer) int {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "karpgate_") {
			n += len(f.GetMetric())
		}
	}
	return n
}
