package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/karpgate/karpgate/disruption/guard"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/test/testenv"
)

// TestConcurrentEditsAreNeverOverwritten makes a user edit a NodePool
// between the guard's read and its patch, on a real API server. The patch
// carries the resourceVersion it was computed from, so the API server
// refuses it with a conflict; the guard reads again and patches again, and
// both the user's budget and the hold survive. Lifting the hold then meets
// the same race and keeps the user's edit too.
func TestConcurrentEditsAreNeverOverwritten(t *testing.T) {
	env := testenv.Start(t, testenv.CRDs(t, crdsource.KarpenterV1_15_1))
	ctx := context.Background()
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "default"},
		"spec": map[string]any{
			"disruption": map[string]any{"consolidateAfter": "0s", "budgets": []any{map[string]any{"nodes": "10%"}}},
			"template": map[string]any{"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []any{},
			}},
		},
	}}
	if err := env.Client.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// userEdit appends a budget, as someone running kubectl edit would.
	userEdit := func(nodes string) {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(pool.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, live); err != nil {
			t.Fatal(err)
		}
		budgets, _, _ := unstructured.NestedSlice(live.Object, "spec", "disruption", "budgets")
		budgets = append(budgets, map[string]any{"nodes": nodes})
		if err := unstructured.SetNestedSlice(live.Object, budgets, "spec", "disruption", "budgets"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Update(ctx, live); err != nil {
			t.Fatal(err)
		}
	}
	// racing patches: before the guard's first patch, the user edits.
	direct, err := client.NewWithWatch(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	racing := func(nodes string) (client.Client, *atomic.Int32) {
		var patches atomic.Int32
		c := interceptor.NewClient(direct, interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if patches.Add(1) == 1 {
					userEdit(nodes)
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
		})
		return c, &patches
	}
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

	c, patches := racing("3")
	m, err := guard.Engage(ctx, c, "default", now, "replacement nodes not Ready")
	if err != nil || m == nil {
		t.Fatalf("Engage: %v %v", m, err)
	}
	if n := patches.Load(); n != 2 {
		t.Fatalf("%d patches, want 2: the first must have been refused with a conflict", n)
	}
	want := `[{"nodes":"10%"},{"nodes":"3"},{"nodes":"0","reasons":["Drifted"]}]`
	if got := budgets(ctx, t, env); got != want {
		t.Fatalf("budgets after the hold %s, want %s (the user's edit and the hold)", got, want)
	}
	if m.Index != 2 {
		t.Fatalf("the marker records index %d, want 2: where the hold really went", m.Index)
	}
	// The hold is written under guard.FieldManager, whatever the binary is
	// called (this test's would be guard.test), so GitOps settings can name it.
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(pool.GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, live); err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, f := range live.GetManagedFields() {
		managers = append(managers, f.Manager)
	}
	if !slices.Contains(managers, guard.FieldManager) {
		t.Fatalf("field managers %v, want %q among them", managers, guard.FieldManager)
	}

	c, patches = racing("4")
	outcome, _, err := guard.Release(ctx, c, "default", now.Add(time.Hour))
	if err != nil || patches.Load() != 2 {
		t.Fatalf("Release: %v %v after %d patches", outcome, err, patches.Load())
	}
	if got, want := budgets(ctx, t, env), `[{"nodes":"10%"},{"nodes":"3"},{"nodes":"4"}]`; got != want {
		t.Fatalf("budgets after the release %s, want %s", got, want)
	}
	releaseConfirmsTheHoldIsGone(ctx, t, env, direct, now.Add(2*time.Hour))
}

// releaseConfirmsTheHoldIsGone, on the same API server: a dry-run
// release changes nothing and confirms from the API server's answer
// alone; a hold that something puts back right after the release is
// reported as ErrNotLifted; a new hold placed meanwhile is not.
func releaseConfirmsTheHoldIsGone(ctx context.Context, t *testing.T, env *testenv.Env, direct client.WithWatch, now time.Time) {
	const held = `[{"nodes":"10%"},{"nodes":"3"},{"nodes":"4"},{"nodes":"0","reasons":["Drifted"]}]`
	if _, _, err := guard.FreezeNodePool(ctx, direct, "default", now, "incident 42"); err != nil {
		t.Fatal(err)
	}
	outcome, _, err := guard.Release(ctx, client.NewDryRunClient(direct), "default", now)
	if err != nil || outcome != guard.Removed {
		t.Fatalf("dry-run Release: %v %v", outcome, err)
	}
	if got := budgets(ctx, t, env); got != held {
		t.Fatalf("budgets after a dry-run release %s, want %s", got, held)
	}

	// afterPatch runs write right after the release's patch is stored.
	afterPatch := func(write func(live *unstructured.Unstructured)) client.Client {
		return interceptor.NewClient(direct, interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if err := c.Patch(ctx, obj, patch, opts...); err != nil {
					return err
				}
				live := &unstructured.Unstructured{}
				live.SetAPIVersion("karpenter.sh/v1")
				live.SetKind("NodePool")
				if err := c.Get(ctx, client.ObjectKey{Name: "default"}, live); err != nil {
					t.Fatal(err)
				}
				write(live)
				if err := c.Update(ctx, live); err != nil {
					t.Fatal(err)
				}
				return nil
			},
		})
	}
	var lifted string
	putBack := afterPatch(func(live *unstructured.Unstructured) {
		budgets, _, _ := unstructured.NestedSlice(live.Object, "spec", "disruption", "budgets")
		_ = unstructured.SetNestedSlice(live.Object, append(budgets, map[string]any{"nodes": "0", "reasons": []any{"Drifted"}}), "spec", "disruption", "budgets")
		annotations := live.GetAnnotations()
		annotations["karpgate.io/rollout-guard"] = lifted
		live.SetAnnotations(annotations)
	})
	lifted = guardRecord(ctx, t, env)
	if _, _, err := guard.Release(ctx, putBack, "default", now); !errors.Is(err, guard.ErrNotLifted) {
		t.Fatalf("Release of a hold put back: %v, want ErrNotLifted", err)
	}
	if got := budgets(ctx, t, env); got != held || guardRecord(ctx, t, env) != lifted {
		t.Fatalf("budgets %s, record %s: the hold put back is not there", got, guardRecord(ctx, t, env))
	}

	refrozen := afterPatch(func(live *unstructured.Unstructured) {
		if _, err := guard.Freeze(live, now.Add(time.Minute), "incident 43"); err != nil {
			t.Fatal(err)
		}
	})
	if outcome, _, err := guard.Release(ctx, refrozen, "default", now); err != nil || outcome != guard.Removed {
		t.Fatalf("Release followed by a new freeze: %v %v, want %v and no error", outcome, err, guard.Removed)
	}
	if record := guardRecord(ctx, t, env); !strings.Contains(record, "incident 43") {
		t.Fatalf("record %s, want the new freeze", record)
	}
}

// liveDefault is the NodePool "default" as the API server has it.
func liveDefault(ctx context.Context, t *testing.T, env *testenv.Env) *unstructured.Unstructured {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetAPIVersion("karpenter.sh/v1")
	live.SetKind("NodePool")
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, live); err != nil {
		t.Fatal(err)
	}
	return live
}

func guardRecord(ctx context.Context, t *testing.T, env *testenv.Env) string {
	t.Helper()
	return liveDefault(ctx, t, env).GetAnnotations()["karpgate.io/rollout-guard"]
}

func budgets(ctx context.Context, t *testing.T, env *testenv.Env) string {
	t.Helper()
	b, _, _ := unstructured.NestedSlice(liveDefault(ctx, t, env).Object, "spec", "disruption", "budgets")
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
