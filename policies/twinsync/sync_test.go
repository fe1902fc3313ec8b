package twinsync_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/devcluster/controlplane"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
	"github.com/karpgate/karpgate/policies/twinsync"
	"github.com/karpgate/karpgate/test/testenv"
)

// cp is the one API server of the package's tests. Each test works in a
// namespace of its own and removes the cluster-scoped policy and bindings
// it applied, so the tests run one after another on it.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	var err error
	if cp, err = controlplane.Start(controlplane.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "starting the control plane:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		code = 1
	}
	os.Exit(code)
}

// engines hands out an engine the test can swap, as policywatch does when
// karpgate.yaml changes.
type engines struct {
	e atomic.Pointer[policies.Engine]
}

func (s *engines) Engine() *policies.Engine { return s.e.Load() }

// enginesByYAML are the engines made so far, by karpgate.yaml: building one takes
// seconds under the race detector, and an engine is not changed by use.
var enginesByYAML = map[string]*policies.Engine{}

func engineFor(t *testing.T, karpgateYAML string) *policies.Engine {
	t.Helper()
	if e, ok := enginesByYAML[karpgateYAML]; ok {
		return e
	}
	cfg, err := config.Parse("karpgate.yaml", []byte(karpgateYAML))
	if err != nil {
		t.Fatal(err)
	}
	judged := release.ForRelease(release.Newest(), true, "newest")
	e, err := policies.New(context.Background(), policies.Options{Config: cfg, Karpenter: &judged})
	if err != nil {
		t.Fatal(err)
	}
	enginesByYAML[karpgateYAML] = e
	return e
}

// fixture is one test's namespace, engine and syncer on the shared API
// server.
type fixture struct {
	t       *testing.T
	c       client.Client
	ns      string
	engines *engines
	syncer  *twinsync.Syncer
	// built caches twin.ForEngine for the engine in use: building the
	// twins takes seconds under the race detector.
	built      *policies.Engine
	objs       twin.Objects
	twinsBuilt []twin.Twin
}

var namespaces atomic.Int32

func newFixture(t *testing.T, karpgateYAML string, interval time.Duration) *fixture {
	t.Helper()
	env := testenv.Attach(t, cp)
	ns := fmt.Sprintf("twinsync-%d", namespaces.Add(1))
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, c: env.Client, ns: ns, engines: &engines{}}
	f.engines.e.Store(engineFor(t, karpgateYAML))
	f.syncer = twinsync.New(twinsync.Options{Client: env.Client, Engines: f.engines, Namespace: ns,
		Interval: interval, Resync: interval, Log: logr.Discard()})
	t.Cleanup(func() {
		// The policy stays for the next test: the API server takes seconds
		// to compile its CEL, and it does not depend on the namespace.
		for _, o := range bindingObjects(f.objects()) {
			if err := f.c.Delete(context.Background(), o); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("removing %s: %v", o.GetName(), err)
			}
		}
	})
	return f
}

// objects are what the API server needs for the engine in use, built as
// karpgate's install builds them.
func (f *fixture) objects() twin.Objects {
	f.t.Helper()
	objs, _ := f.build()
	return objs
}

func (f *fixture) build() (twin.Objects, []twin.Twin) {
	f.t.Helper()
	if e := f.engines.Engine(); e != f.built {
		objs, twins, err := twin.ForEngine(e, f.ns)
		if err != nil {
			f.t.Fatal(err)
		}
		f.built, f.objs, f.twinsBuilt = e, objs, twins
	}
	return f.objs, f.twinsBuilt
}

func bindingObjects(objs twin.Objects) []client.Object {
	out := make([]client.Object, len(objs.Bindings))
	for i, b := range objs.Bindings {
		out[i] = b
	}
	return out
}

func (f *fixture) sync() {
	f.t.Helper()
	if err := f.syncer.Sync(f.t.Context()); err != nil {
		f.t.Fatal(err)
	}
}

// apply creates the policy, unless an earlier test left it, and the
// bindings as generated (the install's job); the params are the syncer's.
func (f *fixture) apply() {
	f.t.Helper()
	objs := f.objects()
	if err := f.c.Create(f.t.Context(), objs.Policy.DeepCopy()); client.IgnoreAlreadyExists(err) != nil {
		f.t.Fatalf("creating the policy: %v", err)
	}
	f.applyBindings()
}

func (f *fixture) applyBindings() {
	f.t.Helper()
	for _, b := range f.objects().Bindings {
		if err := f.c.Create(f.t.Context(), b.DeepCopy()); err != nil {
			f.t.Fatalf("creating %s: %v", b.Name, err)
		}
	}
}

func (f *fixture) configMap(name string) *corev1.ConfigMap {
	f.t.Helper()
	var cm corev1.ConfigMap
	if err := f.c.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}, &cm); err != nil {
		f.t.Fatal(err)
	}
	return &cm
}

// wantActions is each twinned rule's action at admission under the engine
// in use, from the parameters karpgate writes: absent when the rule is off.
func (f *fixture) wantActions() map[string]config.Action {
	f.t.Helper()
	out := map[string]config.Action{}
	objs, twins := f.build()
	data := objs.Params[0].Data
	for _, tw := range twins {
		if a, on := data["rule."+tw.ID()]; on {
			out[tw.ID()] = config.Action(a)
		}
	}
	return out
}

// covered is every (rule, action) Covered reports, over all twins and
// actions.
func (f *fixture) covered() map[string]config.Action {
	f.t.Helper()
	_, twins := f.build()
	out := map[string]config.Action{}
	for _, tw := range twins {
		for _, a := range twin.Actions {
			if f.syncer.Covered(tw.ID(), a) {
				if prev, twice := out[tw.ID()]; twice {
					f.t.Errorf("%s is covered at both %s and %s", tw.ID(), prev, a)
				}
				out[tw.ID()] = a
			}
		}
	}
	return out
}

func TestSyncWritesTheParameters(t *testing.T) {
	f := newFixture(t, "", 0)
	want := f.objects().Params
	created := syncCount(t, "created")
	f.sync()
	if got := syncCount(t, "created") - created; got != float64(len(want)) {
		t.Errorf("syncs_total{result=created} grew by %v; want %d, one per parameter object", got, len(want))
	}
	for _, w := range want {
		if got := f.configMap(w.Name).Data; !maps.Equal(got, w.Data) {
			t.Errorf("%s holds %d keys, want the %d karpgate writes: %v", w.Name, len(got), len(w.Data), diffKeys(got, w.Data))
		}
	}

	// Edits to the data are repaired, each kind of edit in turn; a pass
	// with nothing to repair writes nothing.
	first := want[0].Name
	edits := []struct {
		name string
		edit func(map[string]string)
	}{
		{"a value changed", func(d map[string]string) { d["action"] = "audit" }},
		{"a key removed", func(d map[string]string) {
			for k := range d {
				if strings.HasPrefix(k, "rule.") {
					delete(d, k)
					return
				}
			}
			t.Fatal("no rule.* key to remove")
		}},
		{"a key added", func(d map[string]string) { d["rule.KG999"] = "deny" }},
		{"all data removed", func(d map[string]string) { clear(d) }},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			cm := f.configMap(first)
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			e.edit(cm.Data)
			if err := f.c.Update(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			updated, unchanged := syncCount(t, "updated"), syncCount(t, "unchanged")
			f.sync()
			if got := syncCount(t, "updated") - updated; got != 1 {
				t.Errorf("syncs_total{result=updated} grew by %v; want 1", got)
			}
			if got := syncCount(t, "unchanged") - unchanged; got != 0 {
				t.Errorf("syncs_total{result=unchanged} grew by %v on a pass that repaired; want 0", got)
			}
			repaired := f.configMap(first)
			if !maps.Equal(repaired.Data, want[0].Data) {
				t.Fatalf("after the sync %s differs from what karpgate writes: %v", first, diffKeys(repaired.Data, want[0].Data))
			}

			before := map[string]string{}
			for _, w := range want {
				before[w.Name] = f.configMap(w.Name).ResourceVersion
			}
			unchanged = syncCount(t, "unchanged")
			f.sync()
			if got := syncCount(t, "unchanged") - unchanged; got != 1 {
				t.Errorf("syncs_total{result=unchanged} grew by %v on a pass with nothing to do; want 1", got)
			}
			for _, w := range want {
				if rv := f.configMap(w.Name).ResourceVersion; rv != before[w.Name] {
					t.Errorf("a sync with nothing to do wrote %s (resourceVersion %s -> %s)", w.Name, before[w.Name], rv)
				}
			}
		})
	}
}

func diffKeys(got, want map[string]string) []string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			out = append(out, fmt.Sprintf("%s=%q (want %q)", k, g, v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s=%q (not karpgate's)", k, v))
		}
	}
	return out
}
