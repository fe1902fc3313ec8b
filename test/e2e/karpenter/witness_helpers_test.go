package karpentere2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/internal/devcluster/karpenterstack"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/testenv"
)

// witnessPool holds two nodes that nothing may disrupt (a budget of 0 for
// every reason) and that between them are candidates for every reason:
// both Drifted, one empty, one running a pod (Karpenter v1.15 leaves empty
// nodes to Emptiness, so only a node with a pod is an Underutilized
// candidate), one unhealthy. From Karpenter v1.15 (budgetMetrics) a
// reason's allowed disruptions are computed, and exported for every
// NodePool, only in a disruption cycle where some node is a candidate for
// that reason; the witness makes that every cycle, whatever else the
// cluster runs, so that Karpenter's gauges are fresh for every reason, as
// they are on v1.0.8.
const witnessPool = "witness"

// unhealthyCondition is the node condition Karpenter's kwok provider has a
// repair policy for (kwok/cloudprovider: KWOKUnhealthy=True, tolerated 30
// seconds): a node carrying it is a candidate for node repair, which v1.15
// paces with the Unhealthy budget.
const unhealthyCondition = "KWOKUnhealthy"

var witnesses = struct {
	sync.Mutex
	done map[string]*sync.Once
	err  map[string]error
}{done: map[string]*sync.Once{}, err: map[string]error{}}

// witness sets up the witness of release's cluster once, when its Karpenter
// needs one, and waits until Karpenter exports every reason of it.
func witness(t *testing.T, c *localcluster.Cluster, env *testenv.Env, release karpenterstack.Release) {
	t.Helper()
	if budgetMetricsOf[release.Version].afterDisrupting {
		return
	}
	witnesses.Lock()
	once := witnesses.done[release.Version]
	if once == nil {
		once = &sync.Once{}
		witnesses.done[release.Version] = once
	}
	witnesses.Unlock()
	once.Do(func() {
		// What the others see if the test setting it up fails on the way.
		witnesses.Lock()
		witnesses.err[release.Version] = fmt.Errorf("setting it up failed in %s", t.Name())
		witnesses.Unlock()
		err := startWitness(t, c, env)
		witnesses.Lock()
		witnesses.err[release.Version] = err
		witnesses.Unlock()
	})
	witnesses.Lock()
	err := witnesses.err[release.Version]
	witnesses.Unlock()
	if err != nil {
		t.Fatalf("the witness node of Karpenter %s: %v", release, err)
	}
}

func startWitness(t *testing.T, c *localcluster.Cluster, env *testenv.Env) error {
	p := pool{Name: witnessPool, Release: "v1", Budgets: `[{"nodes":"0"}]`}
	apply(t, env, p.yaml(), deploymentYAML(p.Name, 2))
	waitLaunched(t, c, env, p.Name, 2)
	// Drifted: a new template; empty: one of the two pods gone, so one
	// node keeps a pod (Underutilized); unhealthy: the condition.
	p.Release = "v2"
	apply(t, env, p.yaml())
	env.MustKubectl(nil, "scale", "deployment/"+p.Name, "--namespace=default", "--replicas=1")
	var nodes corev1.NodeList
	if err := env.Client.List(context.Background(), &nodes, client.MatchingLabels{karpenter.NodePoolLabel: p.Name}); err != nil {
		return err
	}
	if len(nodes.Items) != 2 {
		return fmt.Errorf("%d nodes, want 2", len(nodes.Items))
	}
	now := metav1.Now()
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
		Type: unhealthyCondition, Status: corev1.ConditionTrue, Reason: "KarpgateWitness",
		Message: "karpgate e2e: a repair candidate whose budget allows nothing", LastHeartbeatTime: now, LastTransitionTime: now,
	}}}})
	if err != nil {
		return err
	}
	// A strategic merge patch adds the condition beside the others (they
	// merge by type); kwok's heartbeat posts every condition again.
	if err := env.Client.Status().Patch(context.Background(), &nodes.Items[0], client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		return fmt.Errorf("marking node %s %s: %w", nodes.Items[0].Name, unhealthyCondition, err)
	}
	reasons := []string{karpenter.ReasonUnderutilized, karpenter.ReasonEmpty, karpenter.ReasonDrifted, "Unhealthy"}
	waitFor(t, "Karpenter exporting the witness's allowed disruptions for every reason", 5*time.Minute, func() error {
		families, err := scrape(c.Karpenter.KarpenterMetricsURL)
		if err != nil {
			return err
		}
		got := gauges(families, "karpenter_nodepools_allowed_disruptions")
		var missing []string
		for _, r := range reasons {
			if _, ok := got[poolReason{witnessPool, strings.ToLower(r)}]; !ok {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("no series for %v yet%s", missing, poolNodes(env, witnessPool))
		}
		return nil
	})
	return nil
}
