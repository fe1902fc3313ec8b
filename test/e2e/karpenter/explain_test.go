package karpentere2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/cmd/karpgate/app"
	"github.com/karpgate/karpgate/disruption/explain"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// TestExplainOnRealNodes runs `karpgate explain` on a node Karpenter has
// marked Drifted, on every Karpenter release, and holds its verdict against
// what Karpenter then does: while the NodePool's Drifted budget is 0,
// explain says the budget stops drift and Karpenter leaves the node over
// several of its drift evaluations; once the budget allows one, explain
// says the node is a drift candidate and Karpenter replaces it.
func TestExplainOnRealNodes(t *testing.T) {
	t.Parallel()
	forEachRelease(t, testExplain)
}

func testExplain(t *testing.T, release karpenterstack.Release) {
	c, env := cluster(t, release)
	p := pool{Name: "explained", Release: "v1", Budgets: `[{"nodes":"0","reasons":["Drifted"]}]`}
	apply(t, env, p.yaml(), deploymentYAML(p.Name, 1))
	waitLaunched(t, c, env, p.Name, 1)
	claims, err := nodeClaims(env, p.Name)
	if err != nil || len(claims) != 1 {
		t.Fatalf("NodeClaims of %s: %d, %v", p.Name, len(claims), err)
	}
	name := claims[0].GetName()
	p.Release = "v2"
	apply(t, env, p.yaml())
	waitFor(t, "Karpenter marking "+name+" Drifted", 3*time.Minute, func() error {
		claims, err := nodeClaims(env, p.Name)
		if err != nil {
			return err
		}
		for _, nc := range claims {
			if nc.GetName() == name && claimCondition(nc, karpenter.ConditionDrifted) == "True" {
				return nil
			}
		}
		return fmt.Errorf("not Drifted yet")
	})

	held := explainDrift(t, c, name)
	if !held.drifted || held.reason.Candidate || held.reason.Budget.Allowed.Count != 0 || !hasStop(held.reason, explain.StopBudget) {
		t.Fatalf("explain on a Drifted node whose Drifted budget is 0: drifted %v, candidate %v, allowed %+v, stops %+v; want drifted, no candidate, 0 allowed, a budget stop",
			held.drifted, held.reason.Candidate, held.reason.Budget.Allowed, held.reason.Stops)
	}
	// Karpenter agrees: three drift evaluations leave the node alone.
	cyclesSeen(t, c, "drifted", 3, func() error {
		claims, err := nodeClaims(env, p.Name)
		if err != nil {
			return err
		}
		if len(claims) != 1 || claims[0].GetName() != name || claims[0].GetDeletionTimestamp() != nil {
			t.Fatalf("Karpenter disrupted %s although explain said its budget stops drift: NodeClaims now %v", name, names(claims))
		}
		return nil
	})

	env.MustKubectl(nil, "patch", "nodepools.v1.karpenter.sh", p.Name, "--type=json",
		"-p", `[{"op":"replace","path":"/spec/disruption/budgets/0/nodes","value":"1"}]`)
	// Karpenter acts on the opened budget within one of its evaluations; on
	// a busy machine that can come before explain's first look, and then
	// the NodeClaim is gone, which is what the budget allowed: the
	// replacement is still checked below, explain's verdict only when the
	// look came first.
	replacedFirst := false
	waitFor(t, "explain calling "+name+" a drift candidate once the budget allows one", 2*time.Minute, func() error {
		free, err := explainDriftErr(c, name)
		if err != nil {
			claims, listErr := nodeClaims(env, p.Name)
			if listErr == nil && !slices.ContainsFunc(claims, func(nc unstructured.Unstructured) bool { return nc.GetName() == name }) {
				replacedFirst = true
				return nil
			}
			return err
		}
		if !free.reason.Candidate || free.reason.Budget.Allowed.Count != 1 {
			// Karpenter may already be replacing it: then it says so.
			return fmt.Errorf("candidate %v, allowed %+v, stops %+v", free.reason.Candidate, free.reason.Budget.Allowed, free.reason.Stops)
		}
		return nil
	})
	if replacedFirst {
		t.Logf("Karpenter replaced %s before explain looked at the opened budget", name)
	}
	waitFor(t, "Karpenter replacing the drift candidate "+name, 5*time.Minute, func() error {
		claims, err := nodeClaims(env, p.Name)
		if err != nil {
			return err
		}
		for _, nc := range claims {
			if nc.GetName() == name {
				return fmt.Errorf("%s still there%s", name, poolNodes(env, p.Name))
			}
		}
		return nil
	})
	waitLaunched(t, c, env, p.Name, 1)
}

// driftVerdict is what explain says of a node's drift.
type driftVerdict struct {
	drifted bool
	reason  explain.Reason
}

func explainDrift(t *testing.T, c *localcluster.Cluster, nodeClaim string) driftVerdict {
	t.Helper()
	v, err := explainDriftErr(c, nodeClaim)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// explainDriftErr runs `karpgate explain nodeclaim/NAME -o json` against the
// cluster, as a user would, and returns its Drifted verdict.
func explainDriftErr(c *localcluster.Cluster, nodeClaim string) (driftVerdict, error) {
	var out, errOut bytes.Buffer
	if code := app.Execute([]string{"explain", "nodeclaim/" + nodeClaim, "-o", "json", "--kubeconfig", c.KubeconfigPath}, nil, &out, &errOut); code != 0 {
		return driftVerdict{}, fmt.Errorf("karpgate explain exited %d: %s", code, errOut.String())
	}
	var e explain.Explanation
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		return driftVerdict{}, fmt.Errorf("karpgate explain -o json: %w\n%s", err, out.String())
	}
	for _, r := range e.Reasons {
		if string(r.Reason) == karpenter.ReasonDrifted {
			return driftVerdict{drifted: e.Drift.Drifted, reason: r}, nil
		}
	}
	return driftVerdict{}, fmt.Errorf("karpgate explain says nothing of Drifted:\n%s", out.String())
}

func hasStop(r explain.Reason, kind explain.StopKind) bool {
	for _, s := range r.Stops {
		if s.Kind == kind {
			return true
		}
	}
	return false
}

// cyclesSeen waits for n more of Karpenter's disruption evaluations for
// reason (lower case, as the metric labels it), calling during after each
// scrape; during fails the test itself when what it watches goes wrong.
func cyclesSeen(t *testing.T, c *localcluster.Cluster, reason string, n float64, during func() error) {
	t.Helper()
	const evaluations = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds"
	start, err := scrape(c.Karpenter.KarpenterMetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	if start[evaluations] == nil {
		t.Fatalf("Karpenter exports no %s: cannot count its disruption cycles", evaluations)
	}
	before := counter(start, evaluations, map[string]string{"reason": reason})
	waitFor(t, fmt.Sprintf("%v more Karpenter disruption cycles evaluating %s", n, reason), 3*time.Minute, func() error {
		now, err := scrape(c.Karpenter.KarpenterMetricsURL)
		if err != nil {
			return err
		}
		if err := during(); err != nil {
			return err
		}
		if seen := counter(now, evaluations, map[string]string{"reason": reason}) - before; seen < n {
			return fmt.Errorf("%v cycles so far", seen)
		}
		return nil
	})
}
