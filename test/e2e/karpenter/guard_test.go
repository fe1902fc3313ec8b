package karpentere2e

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/disruption/events"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/testenv"
)

// TestRolloutGuardHoldsARealBadRollout drifts a NodePool to a template
// whose nodes never become Ready (the kwok fault stage), and checks that
// karpgate's rollout guard holds the rollout for real: its budget is added
// and Karpenter reports zero Drifted disruptions allowed; when the operator
// then widens the NodePool's own budget, which would let Karpenter start two
// more replacements at once, Karpenter starts none over several of its
// disruption cycles. Fixing the template, `karpgate resume` and removing the
// replacement that never came up let the rollout complete.
func TestRolloutGuardHoldsARealBadRollout(t *testing.T) {
	t.Parallel()
	forEachRelease(t, testRolloutGuard)
}

func testRolloutGuard(t *testing.T, release karpenterstack.Release) {
	c, env := cluster(t, release)
	witness(t, c, env, release)
	guarded := pool{Name: "guarded", Release: "v1", Budgets: `[{"nodes":"1"}]`}
	apply(t, env, guarded.yaml(), deploymentYAML(guarded.Name, 3))
	waitLaunched(t, c, env, guarded.Name, 3)
	before, err := nodeClaims(env, guarded.Name)
	if err != nil {
		t.Fatal(err)
	}
	original := names(before)

	bad := guarded
	bad.Release, bad.Fault = "v2", karpenterstack.FaultNotReady
	if warnings := apply(t, env, bad.yaml()); !strings.Contains(warnings, "KG601") {
		t.Errorf("the bad template change gave no KG601 warning:\n%s", warnings)
	}
	waitFor(t, "the rollout guard holds guarded", guardReadyTimeout+5*time.Minute, func() error {
		st, err := karpgateStatus(c, guarded.Name)
		if err != nil {
			return err
		}
		if !st.Guard.Held {
			return fmt.Errorf("not held: %d drifted, %d disrupting", st.Drift.Total, st.Disrupting)
		}
		return nil
	})
	budgets, annotations := nodePoolBudgets(t, env, guarded.Name)
	if budgets != `[{"nodes":"1"},{"nodes":"0","reasons":["Drifted"]}]` || !strings.Contains(annotations[karpenter.RolloutGuardAnnotation], `"index":1`) {
		t.Fatalf("held NodePool: budgets %s, guard record %q", budgets, annotations[karpenter.RolloutGuardAnnotation])
	}
	if note := eventNote(t, env.Client, guarded.Name, events.GuardHeld); !strings.Contains(note, "no Ready Node") {
		t.Errorf("RolloutGuardHeld event note = %q", note)
	}

	// The operator, seeing a slow rollout, allows 3 nodes at once: without
	// the guard Karpenter would start two more replacements right away.
	// A JSON patch of that one field, as `kubectl apply` of the whole list
	// would drop karpgate's budget.
	env.MustKubectl(nil, "patch", "nodepools.v1.karpenter.sh", guarded.Name, "--type=json",
		"-p", `[{"op":"replace","path":"/spec/disruption/budgets/0/nodes","value":"3"}]`)
	waitFor(t, "Karpenter allows no Drifted disruption of guarded, as karpgate says", 2*time.Minute, func() error {
		cmp, err := compareNow(c)
		if err != nil {
			return err
		}
		if v := cmp.value(guarded.Name, karpenter.ReasonDrifted); v != 0 {
			return fmt.Errorf("karpgate allows %v", v)
		}
		if v := cmp.value(guarded.Name, karpenter.ReasonEmpty); v != 2 {
			return fmt.Errorf("karpgate allows %v Empty disruptions, want 3 minus the node disrupting", v)
		}
		return agree(cmp, []string{guarded.Name}, nil)
	})
	holdsOverCycles(t, c, env, guarded.Name)

	// The fix: a template that comes up (a merge patch, keeping the guard's
	// budget), the hold lifted, and the replacement that never came up
	// removed so that Karpenter stops waiting for it.
	env.MustKubectl(nil, "patch", "nodepools.v1.karpenter.sh", guarded.Name, "--type=merge",
		"-p", `{"spec":{"template":{"metadata":{"labels":{"release":"v3","karpgate.io/simulated-fault":null}}}}}`)
	var out, errOut bytes.Buffer
	if code := app.Execute([]string{"resume", guarded.Name, "--kubeconfig", c.KubeconfigPath}, nil, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "removed karpgate's budget spec.disruption.budgets[1]") {
		t.Fatalf("karpgate resume exited %d: %s%s", code, out.String(), errOut.String())
	}
	if stuck := deleteStuck(t, env, guarded.Name); len(stuck) == 0 {
		t.Error("no replacement of the bad template was left to remove")
	}
	waitFor(t, "the rollout of the fixed template completes", 8*time.Minute, func() error {
		st, err := karpgateStatus(c, guarded.Name)
		if err != nil {
			return err
		}
		if st.Guard.Held {
			return fmt.Errorf("held again: %s", st.Guard.Marker.Reason)
		}
		claims, err := nodeClaims(env, guarded.Name)
		if err != nil {
			return err
		}
		for _, nc := range claims {
			if original[nc.GetName()] || claimCondition(nc, "Drifted") == "True" || nc.GetLabels()[karpenterstack.FaultLabel] != "" {
				return fmt.Errorf("NodeClaim %s not replaced by a good one yet", nc.GetName())
			}
		}
		if st.Nodes != 3 || st.Disrupting != 0 || len(claims) != 3 {
			return fmt.Errorf("%d NodeClaims, %d nodes, %d disrupting", len(claims), st.Nodes, st.Disrupting)
		}
		return nil
	})
	waitLaunched(t, c, env, guarded.Name, 3)
}

// holdsOverCycles watches three of Karpenter's disruption cycles evaluate
// drift and checks that none launched a NodeClaim for the pool: Karpenter
// honours the guard's budget, while the pool's NodeClaims stay Drifted.
func holdsOverCycles(t *testing.T, c *localcluster.Cluster, env *testenv.Env, pool string) {
	t.Helper()
	const evaluations = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds"
	drift := map[string]string{"reason": "drifted"}
	created := map[string]string{"nodepool": pool}
	start, err := scrape(c.Karpenter.KarpenterMetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	if start[evaluations] == nil {
		t.Fatalf("Karpenter exports no %s: cannot count its disruption cycles", evaluations)
	}
	claimsBefore, err := nodeClaims(env, pool)
	if err != nil {
		t.Fatal(err)
	}
	createdBefore, cyclesBefore := counter(start, "karpenter_nodeclaims_created_total", created), counter(start, evaluations, drift)
	waitFor(t, "three more Karpenter disruption cycles evaluating drift", 3*time.Minute, func() error {
		now, err := scrape(c.Karpenter.KarpenterMetricsURL)
		if err != nil {
			return err
		}
		if n := counter(now, "karpenter_nodeclaims_created_total", created); n != createdBefore {
			t.Fatalf("Karpenter created %v NodeClaims for %s while the guard held it", n-createdBefore, pool)
		}
		if n := counter(now, evaluations, drift) - cyclesBefore; n < 3 {
			return fmt.Errorf("%v cycles so far", n)
		}
		return nil
	})
	claims, err := nodeClaims(env, pool)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(claims), names(claimsBefore); !reflect.DeepEqual(got, want) {
		t.Errorf("NodeClaims of %s changed while the guard held it: %v, then %v", pool, want, got)
	}
	drifted := 0
	for _, nc := range claims {
		if claimCondition(nc, "Drifted") == "True" {
			drifted++
		}
	}
	if drifted < 2 {
		t.Errorf("%d NodeClaims of %s are Drifted: the cycles had too little to hold back", drifted, pool)
	}
	st, err := karpgateStatus(c, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Guard.Held {
		t.Errorf("the guard no longer holds %s", pool)
	}
}

// deleteStuck deletes the pool's NodeClaims of the bad template, as an
// operator cleans up nodes that never came up, and returns their names.
func deleteStuck(t *testing.T, env *testenv.Env, pool string) []string {
	t.Helper()
	claims, err := nodeClaims(env, pool)
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for i := range claims {
		if claims[i].GetLabels()[karpenterstack.FaultLabel] != karpenterstack.FaultNotReady {
			continue
		}
		if err := env.Client.Delete(context.Background(), &claims[i]); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		deleted = append(deleted, claims[i].GetName())
	}
	return deleted
}

// nodePoolBudgets returns a NodePool's budgets as JSON and its annotations.
func nodePoolBudgets(t *testing.T, env *testenv.Env, name string) (string, map[string]string) {
	t.Helper()
	res := env.Kubectl(nil, "get", "nodepools.v1.karpenter.sh", name, "-o", "jsonpath={.spec.disruption.budgets}")
	np := &unstructured.Unstructured{}
	np.SetAPIVersion(karpenter.CoreGroup + "/" + karpenter.V1)
	np.SetKind(karpenter.KindNodePool)
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	return res.Stdout, np.GetAnnotations()
}

// eventNote returns the note of karpgate's latest event of reason on a
// NodePool.
func eventNote(t *testing.T, c client.Client, pool, reason string) string {
	t.Helper()
	var list eventsv1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	note := ""
	for _, e := range list.Items {
		if e.ReportingController == controller.DefaultName && e.Regarding.Kind == karpenter.KindNodePool && e.Regarding.Name == pool && e.Reason == reason {
			note = e.Note
		}
	}
	return note
}
