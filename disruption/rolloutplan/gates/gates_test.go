package gates

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/internal/karpenter"
)

var (
	t0    = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	gates = v1alpha1.EffectiveGates{NodeReadyTimeout: 5 * time.Minute, MaxFailedNodeClaims: 0, MinPodsReadyPercent: 90, PodReadyTimeout: 2 * time.Minute}
)

// claimOpt changes a NodeClaim of the fixture.
type claimOpt func(*state.NodeClaim, *corev1.Node)

func created(at time.Time) claimOpt {
	return func(nc *state.NodeClaim, _ *corev1.Node) { nc.CreationTimestamp = metav1.NewTime(at) }
}
func notReady() claimOpt {
	return func(_ *state.NodeClaim, n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }
}
func condition(t, status, reason string) claimOpt {
	return func(nc *state.NodeClaim, _ *corev1.Node) {
		nc.Status.Conditions = append(nc.Status.Conditions, state.Condition{Type: t, Status: status, Reason: reason})
	}
}

func pool(name string, claims map[string][]claimOpt) state.Pool {
	p := state.Pool{NodePool: &state.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}, Pods: map[string][]*state.Pod{}}
	for ncName, opts := range claims {
		nc := &state.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: ncName, CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))},
			Status: state.NodeClaimStatus{ProviderID: "kwok://" + ncName, NodeName: "node-" + ncName}}
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + ncName}, Spec: corev1.NodeSpec{ProviderID: "kwok://" + ncName},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		for _, o := range opts {
			o(nc, n)
		}
		p.NodeClaims = append(p.NodeClaims, nc)
		p.Nodes = append(p.Nodes, n)
	}
	return p
}

func pod(name string, started time.Time, ready bool) *state.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	st := metav1.NewTime(started)
	return &state.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Status: state.PodStatus{StartTime: &st, Conditions: []state.PodCondition{{Type: corev1.PodReady, Status: status}}}}
}

func TestEvaluate(t *testing.T) {
	withPods := func(p state.Pool, node string, pods ...*state.Pod) state.Pool { p.Pods[node] = pods; return p }
	registrationUnhealthy := func(p state.Pool, at time.Time) state.Pool {
		p.NodePool.Status.Conditions = []state.Condition{{Type: karpenter.ConditionNodeRegistrationHealthy, Status: "False", Reason: "RegistrationFailed", LastTransitionTime: metav1.NewTime(at)}}
		return p
	}
	for _, tc := range []struct {
		name        string
		pools       []state.Pool
		now         time.Time
		wantResults string // NodesReady NodeClaimsLaunched PodsReady
		wantFailure string // reason
		wantWaiting bool
		wantNext    time.Time
		wantMessage string
	}{
		{name: "ready new nodes pass", pools: []state.Pool{pool("a", map[string][]claimOpt{"a-1": nil})}, now: t0.Add(3 * time.Minute),
			wantResults: "Passing Passing Passing", wantMessage: "1 new NodeClaim(s), each with a Ready Node"},
		{name: "NodeClaims from before the wave do not count", pools: []state.Pool{pool("a", map[string][]claimOpt{"old": {created(t0.Add(-time.Hour)), notReady()}})}, now: t0.Add(time.Hour),
			wantResults: "Passing Passing Passing", wantMessage: "0 new NodeClaim(s)"},
		{name: "a new node not Ready yet is waited for", pools: []state.Pool{pool("a", map[string][]claimOpt{"a-1": {notReady()}})}, now: t0.Add(3 * time.Minute),
			wantResults: "Waiting Passing Passing", wantWaiting: true, wantNext: t0.Add(6 * time.Minute), wantMessage: "waiting up to 5m0s after launch for a-1"},
		{name: "a new node not Ready past the timeout fails", pools: []state.Pool{pool("a", map[string][]claimOpt{"a-1": {notReady()}, "a-2": nil})}, now: t0.Add(6 * time.Minute),
			wantResults: "Failing Passing Passing", wantFailure: v1alpha1.ReasonNodesNotReady, wantMessage: "1 new NodeClaim(s) have no Ready Node 5m0s after launch: a-1"},
		{name: "old drifted NodeClaims are not new", pools: []state.Pool{pool("a", map[string][]claimOpt{"a-1": {notReady(), condition(karpenter.ConditionDrifted, "True", "AMIDrift")}})}, now: t0.Add(time.Hour),
			wantResults: "Passing Passing Passing"},
		{name: "a launch error Karpenter retries fails the gate", pools: []state.Pool{pool("a", map[string][]claimOpt{"a-1": {condition(karpenter.ConditionLaunched, "Unknown", "LaunchFailed")}})}, now: t0.Add(2 * time.Minute),
			wantResults: "Passing Failing Passing", wantFailure: v1alpha1.ReasonNodeClaimsFailed, wantMessage: "a-1 Launched=Unknown (LaunchFailed)"},
		{name: "a launch that has not started is no failure", pools: []state.Pool{pool("a", map[string][]claimOpt{"a-1": {condition(karpenter.ConditionLaunched, "Unknown", karpenter.ConditionAwaitingReconciliation)}})}, now: t0.Add(2 * time.Minute),
			wantResults: "Passing Passing Passing"},
		{name: "NodeRegistrationHealthy=False since the wave fails it", pools: []state.Pool{registrationUnhealthy(pool("a", nil), t0.Add(time.Minute))}, now: t0.Add(2 * time.Minute),
			wantResults: "Passing Failing Passing", wantFailure: v1alpha1.ReasonNodeClaimsFailed, wantMessage: "NodePool a NodeRegistrationHealthy=False (RegistrationFailed)"},
		{name: "NodeRegistrationHealthy=False from before the wave does not", pools: []state.Pool{registrationUnhealthy(pool("a", nil), t0.Add(-time.Minute))}, now: t0.Add(2 * time.Minute),
			wantResults: "Passing Passing Passing"},
		{name: "unready pods past their timeout fail below the threshold",
			pools: []state.Pool{withPods(pool("a", map[string][]claimOpt{"a-1": nil}), "node-a-1", pod("web-1", t0.Add(time.Minute), true), pod("web-2", t0.Add(time.Minute), false))}, now: t0.Add(4 * time.Minute),
			wantResults: "Passing Passing Failing", wantFailure: v1alpha1.ReasonPodsNotReady, wantMessage: "1 of 2 pod(s) on the new nodes are Ready 2m0s after they started, below 90%: not Ready: shop/web-2"},
		{name: "young unready pods are waited for",
			pools: []state.Pool{withPods(pool("a", map[string][]claimOpt{"a-1": nil}), "node-a-1", pod("web-2", t0.Add(3*time.Minute), false))}, now: t0.Add(4 * time.Minute),
			wantResults: "Passing Passing Passing", wantNext: t0.Add(5 * time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Evaluate(tc.pools, t0, gates, tc.now)
			var results []string
			all := ""
			for _, g := range r.Gates {
				results = append(results, string(g.Result))
				all += g.Message + "\n"
			}
			if got := strings.Join(results, " "); got != tc.wantResults {
				t.Errorf("results %s, want %s\n%s", got, tc.wantResults, all)
			}
			gotFailure := ""
			if r.Failure != nil {
				gotFailure = r.Failure.Reason
			}
			if gotFailure != tc.wantFailure || r.Waiting != tc.wantWaiting || !r.Next.Equal(tc.wantNext) {
				t.Errorf("failure %q waiting %v next %v; want %q %v %v", gotFailure, r.Waiting, r.Next, tc.wantFailure, tc.wantWaiting, tc.wantNext)
			}
			if !strings.Contains(all, tc.wantMessage) {
				t.Errorf("messages lack %q:\n%s", tc.wantMessage, all)
			}
		})
	}
}
