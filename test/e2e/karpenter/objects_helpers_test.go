package karpentere2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/cmd/karpgate-dev/localcluster"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/test/testenv"
)

// pool is a v1 NodePool on the simulated nodes: one c-1x on-demand node per
// replica of its Deployment, nothing cheaper to consolidate to.
type pool struct {
	Name string
	// Release is the template label whose change drifts every node.
	Release string
	// Fault, when set, is the simulated-fault label of the template.
	Fault string
	// Budgets is spec.disruption.budgets as JSON; empty leaves it out (the
	// CRD default, 10%).
	Budgets string
	// ConsolidateAfter defaults to 0s: every node is a consolidation
	// candidate as soon as it is initialized, so Karpenter computes its
	// budgets (and updates its allowed-disruptions metric) every 10 seconds.
	ConsolidateAfter string
	// Annotations of the NodePool (waivers).
	Annotations map[string]string
	// Labels of the NodePool (the waves of a RolloutPlan select them).
	Labels map[string]string
	// StartupTaints are keys of NoSchedule startup taints of the template:
	// Karpenter counts a node initialized only once they are removed, so a
	// test that removes them decides when a replacement is ready.
	StartupTaints []string
}

func (p pool) yaml() string {
	labels := fmt.Sprintf("release: %q", p.Release)
	if p.Fault != "" {
		labels += fmt.Sprintf(", %q: %q", "karpgate.io/simulated-fault", p.Fault)
	}
	after := p.ConsolidateAfter
	if after == "" {
		after = "0s"
	}
	budgets := ""
	if p.Budgets != "" {
		budgets = "\n    budgets: " + p.Budgets
	}
	annotations := ""
	for k, v := range p.Annotations {
		annotations += fmt.Sprintf("\n    %q: %q", k, v)
	}
	if annotations != "" {
		annotations = "\n  annotations:" + annotations
	}
	startupTaints := ""
	for _, k := range p.StartupTaints {
		startupTaints += fmt.Sprintf("\n        - {key: %q, effect: NoSchedule}", k)
	}
	if startupTaints != "" {
		startupTaints = "\n      startupTaints:" + startupTaints
	}
	poolLabels := ""
	for k, v := range p.Labels {
		poolLabels += fmt.Sprintf("\n    %q: %q", k, v)
	}
	if poolLabels != "" {
		annotations += "\n  labels:" + poolLabels
	}
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %s%s
spec:
  template:
    metadata:
      labels: {%s}
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [c-1x-amd64-linux]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}%s
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: %s%s
`, p.Name, annotations, labels, startupTaints, after, budgets)
}

// nodeClassYAML is the KWOKNodeClass every pool uses; cluster creates it.
const nodeClassYAML = `apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: default
`

// deploymentYAML runs replicas pods on the pool's nodes, one per node.
func deploymentYAML(pool string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: %[1]s}
      terminationGracePeriodSeconds: 0
      containers:
        - name: app
          image: registry.k8s.io/pause:3.10
          resources: {requests: {cpu: 600m, memory: 128Mi}}
`, pool, replicas)
}

// apply runs kubectl apply on manifests and returns its stderr (warnings).
func apply(t *testing.T, env *testenv.Env, manifests ...string) string {
	t.Helper()
	res := env.Kubectl([]byte(strings.Join(manifests, "\n---\n")), "apply", "-f", "-")
	if res.ExitCode != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stderr
}

// nodeClaims lists the NodeClaims of a pool, as Karpenter wrote them.
func nodeClaims(env *testenv.Env, pool string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(karpenter.CoreGroup + "/" + karpenter.V1)
	list.SetKind(karpenter.KindNodeClaim + "List")
	err := env.Client.List(context.Background(), list, client.MatchingLabels{karpenter.NodePoolLabel: pool})
	return list.Items, err
}

// claimCondition returns the status of a NodeClaim condition, "" if absent.
func claimCondition(nc unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// names returns the names of objects.
func names(items []unstructured.Unstructured) map[string]bool {
	out := make(map[string]bool, len(items))
	for _, it := range items {
		out[it.GetName()] = true
	}
	return out
}

// waitLaunched waits until the pool has replicas initialized, Ready nodes
// as karpgate counts them and the Deployment has every replica available.
func waitLaunched(t *testing.T, c *localcluster.Cluster, env *testenv.Env, pool string, replicas int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d nodes of %s launched and the Deployment available", replicas, pool), 5*time.Minute, func() error {
		st, err := karpgateStatus(c, pool)
		if err != nil {
			return err
		}
		if st.Nodes != replicas || st.Disrupting != 0 {
			return fmt.Errorf("karpgate counts %d nodes, %d disrupting", st.Nodes, st.Disrupting)
		}
		if replicas == 0 {
			return nil // a NodePool without a Deployment
		}
		var d appsv1.Deployment
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: pool}, &d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas != int32(replicas) {
			return fmt.Errorf("Deployment %s: %d of %d replicas available%s", pool, d.Status.AvailableReplicas, replicas, unreadyPods(env, pool))
		}
		return nil
	})
}

// poolNodes says, for a failure message, how each node of a pool and its
// NodeClaim stand: what karpgate and Karpenter count a node disrupting by
// (a karpenter.sh/disrupted taint, a NodeClaim being deleted, Ready not
// True) and what takes it out of the count (no initialized label, an
// instance terminating), then the NodeClaims without a node. Nodes are
// listed before NodeClaims, so what a NodeClaim says is never older than
// what its node says.
func poolNodes(env *testenv.Env, pool string) string {
	ctx := context.Background()
	var nodes corev1.NodeList
	if err := env.Client.List(ctx, &nodes, client.MatchingLabels{karpenter.NodePoolLabel: pool}); err != nil {
		return "; listing its nodes: " + err.Error()
	}
	claims, err := nodeClaims(env, pool)
	if err != nil {
		return "; listing its NodeClaims: " + err.Error()
	}
	byProviderID := map[string]unstructured.Unstructured{}
	for _, nc := range claims {
		id, _, _ := unstructured.NestedString(nc.Object, "status", "providerID")
		byProviderID[id] = nc
	}
	var b strings.Builder
	for _, n := range nodes.Items {
		ready := corev1.ConditionUnknown
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status
			}
		}
		var taints []string
		for _, taint := range n.Spec.Taints {
			taints = append(taints, taint.Key)
		}
		fmt.Fprintf(&b, "\n  node %s: initialized %q, Ready=%s, deleting %v, taints %v", n.Name,
			n.Labels[karpenter.NodeInitializedLabel], ready, n.DeletionTimestamp != nil, taints)
		nc, found := byProviderID[n.Spec.ProviderID]
		if !found {
			b.WriteString("; no NodeClaim")
			continue
		}
		delete(byProviderID, n.Spec.ProviderID)
		fmt.Fprintf(&b, "; NodeClaim %s: %s", nc.GetName(), claimState(nc))
	}
	for _, nc := range claims {
		id, _, _ := unstructured.NestedString(nc.Object, "status", "providerID")
		if _, left := byProviderID[id]; left {
			fmt.Fprintf(&b, "\n  NodeClaim %s, no node: %s", nc.GetName(), claimState(nc))
		}
	}
	return b.String()
}

// claimState is what of a NodeClaim karpgate and Karpenter count by.
func claimState(nc unstructured.Unstructured) string {
	return fmt.Sprintf("deleting %v, Drifted=%s, %s=%s", nc.GetDeletionTimestamp() != nil,
		claimCondition(nc, karpenter.ConditionDrifted), karpenter.ConditionInstanceTerminating, claimCondition(nc, karpenter.ConditionInstanceTerminating))
}

// unreadyPods says, for a failure message, where each pod of a pool's
// Deployment that is not Ready stands: its node, phase and conditions, and
// the node's taints and Ready condition, so that a failed wait says whether
// scheduling, the simulated kubelet or the node lifecycle held it back.
func unreadyPods(env *testenv.Env, pool string) string {
	ctx := context.Background()
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{"app": pool}); err != nil {
		return "; listing its pods: " + err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		if ready {
			continue
		}
		fmt.Fprintf(&b, "\n  pod %s (deleting: %v) on node %q, phase %s", p.Name, p.DeletionTimestamp != nil, p.Spec.NodeName, p.Status.Phase)
		for _, c := range p.Status.Conditions {
			fmt.Fprintf(&b, "; %s=%s %s %s", c.Type, c.Status, c.Reason, c.Message)
		}
		if p.Spec.NodeName == "" {
			continue
		}
		var n corev1.Node
		if err := env.Client.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &n); err != nil {
			fmt.Fprintf(&b, "\n    node: %v", err)
			continue
		}
		fmt.Fprintf(&b, "\n    node taints %v", n.Spec.Taints)
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				fmt.Fprintf(&b, "; Ready=%s %s since %s, last heartbeat %s", c.Status, c.Reason, c.LastTransitionTime.UTC().Format(time.RFC3339), c.LastHeartbeatTime.UTC().Format(time.RFC3339))
			}
		}
	}
	return b.String()
}

// removeStartupTaint removes the startup taint key from every node of pool
// that has it, as the agent a startup taint waits for would, and reports
// how many nodes it released. A node changed meanwhile is left for the next
// call.
func removeStartupTaint(env *testenv.Env, pool, key string) (int, error) {
	ctx := context.Background()
	var nodes corev1.NodeList
	if err := env.Client.List(ctx, &nodes, client.MatchingLabels{karpenter.NodePoolLabel: pool}); err != nil {
		return 0, err
	}
	released := 0
	for i := range nodes.Items {
		n := &nodes.Items[i]
		kept := n.Spec.Taints[:0:0]
		for _, taint := range n.Spec.Taints {
			if taint.Key != key {
				kept = append(kept, taint)
			}
		}
		if len(kept) == len(n.Spec.Taints) {
			continue
		}
		n.Spec.Taints = kept
		if err := env.Client.Update(ctx, n); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue
			}
			return released, err
		}
		released++
	}
	return released, nil
}
