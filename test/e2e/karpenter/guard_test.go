package karpentere2e

import (
	"bytes"
	"context"
	"fmt"
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
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/karpenterstack"
	"github.com/karpgate/karpgate/test/testenv"
)

// TestRolloutGuardHoldsARealBadRollout drifts a NodePool to a template
// whose nodes never become Ready (the kwok fault stage), and checks that
// karpgate's rollout guard holds the rollout for real: its budget is added,
// Karpenter reports zero Drifted disruptions allowed, and once the stuck
// replacement is cleaned up (which frees Karpenter's budget for another
// attempt) Karpenter launches no further replacement over several of its
// disruption cycles. Fixing the template and `karpgate resume` lift the hold,
// and the rollout completes.
func TestRolloutGuardHoldsARealBadRollout(t *testing.T) {
	t.Parallel()
	c, env := cluster(t)
	guarded := pool{Name: "guarded", Release: "v1", Budgets: `[{"nodes":"1"}]`}
	apply(t, env, nodeClassYAML, guarded.yaml(), deploymentYAML(guarded.Name, 3))
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
	waitFor(t, "Karpenter allows no Drifted disruption of guarded, as karpgate says", 2*time.Minute, func() error {
		cmp, err := compareNow(c)
		if err != nil {
			return err
		}
		if v := cmp.value(guarded.Name, karpenter.ReasonDrifted); v != 0 {
			return fmt.Errorf("karpgate allows %v", v)
		}
		return agree(cmp, []string{guarded.Name}, nil)
	})

	// The operator removes the replacements that never came up. Karpenter's
	// command for them fails, the old node it was replacing is no longer
	// disrupting, and the budget of 1 would let Karpenter try again at once.
	stuck := deleteReplacements(t, env, guarded.Name, original)
	if len(stuck) == 0 {
		t.Fatal("no replacement NodeClaim was launched for the bad template")
	}
	waitFor(t, "the stuck replacements gone and no guarded node disrupting", 3*time.Minute, func() error {
		claims, err := nodeClaims(env, guarded.Name)
		if err != nil {
			return err
		}
		for _, nc := range claims {
			if !original[nc.GetName()] {
				return fmt.Errorf("NodeClaim %s still there", nc.GetName())
			}
		}
		st, err := karpgateStatus(c, guarded.Name)
		if err != nil {
			return err
		}
		if st.Disrupting != 0 || st.Drift.Total != 3 {
			return fmt.Errorf("%d disrupting, %d drifted", st.Disrupting, st.Drift.Total)
		}
		return nil
	})
	holdsOverCycles(t, c, env, guarded.Name, original)

	// The fix: a template that comes up, then resume.
	fixed := guarded
	fixed.Release = "v3"
	apply(t, env, fixed.yaml())
	var out, errOut bytes.Buffer
	if code := app.Execute([]string{"resume", guarded.Name, "--kubeconfig", c.KubeconfigPath}, nil, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "removed karpgate's budget spec.disruption.budgets[1]") {
		t.Fatalf("karpgate resume exited %d: %s%s", code, out.String(), errOut.String())
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
// drift after the budget was freed, and checks none of them launched a
// replacement: Karpenter honours the guard's budget.
func holdsOverCycles(t *testing.T, c *localcluster.Cluster, env *testenv.Env, pool string, original map[string]bool) {
	t.Helper()
	const evaluations = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds"
	drift := map[string]string{"reason": "drifted"}
	start, err := scrape(c.Karpenter.KarpenterMetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	created := map[string]string{"nodepool": pool}
	createdBefore, cyclesBefore := counter(start, "karpenter_nodeclaims_created_total", created), counter(start, evaluations, drift)
	if start[evaluations] == nil {
		t.Fatalf("Karpenter exports no %s: cannot count its disruption cycles", evaluations)
	}
	waitFor(t, "three more Karpenter disruption cycles evaluating drift", 3*time.Minute, func() error {
		now, err := scrape(c.Karpenter.KarpenterMetricsURL)
		if err != nil {
			return err
		}
		if n := counter(now, evaluations, drift) - cyclesBefore; n < 3 {
			return fmt.Errorf("%v cycles so far", n)
		}
		if n := counter(now, "karpenter_nodeclaims_created_total", created); n != createdBefore {
			t.Fatalf("Karpenter created %v NodeClaims for %s while the guard held it", n-createdBefore, pool)
		}
		return nil
	})
	claims, err := nodeClaims(env, pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, nc := range claims {
		if !original[nc.GetName()] {
			t.Errorf("NodeClaim %s launched while the guard held %s", nc.GetName(), pool)
		}
		if claimCondition(nc, "Drifted") != "True" {
			t.Errorf("NodeClaim %s is not Drifted: the cycles had nothing to hold back", nc.GetName())
		}
	}
	st, err := karpgateStatus(c, pool)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Guard.Held {
		t.Errorf("the guard no longer holds %s", pool)
	}
}

// deleteReplacements deletes the pool's NodeClaims that are not original
// and returns their names.
func deleteReplacements(t *testing.T, env *testenv.Env, pool string, original map[string]bool) []string {
	t.Helper()
	claims, err := nodeClaims(env, pool)
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for i := range claims {
		if original[claims[i].GetName()] {
			continue
		}
		if claims[i].GetLabels()[karpenterstack.FaultLabel] != karpenterstack.FaultNotReady {
			t.Errorf("replacement %s does not carry the bad template's fault label", claims[i].GetName())
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
