package status

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/disruption/state"
)

// Monday 5 January 2026, 08:30 UTC.
var monday0830 = time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)

func pool(t testing.TB, name, budgets string) *state.NodePool {
	t.Helper()
	np := &state.NodePool{}
	np.Name = name
	np.Spec.Template.Spec.NodeClassRef = state.NodeClassRef{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	if budgets != "" {
		if err := json.Unmarshal([]byte(budgets), &np.Spec.Disruption.Budgets); err != nil {
			t.Fatal(err)
		}
	}
	return np
}

// member is a NodeClaim and its Node, healthy unless options say otherwise.
type member struct {
	claim *state.NodeClaim
	node  *corev1.Node
}

type memberOpt func(*member)

func newMember(poolName string, i int, opts ...memberOpt) member {
	name := fmt.Sprintf("%s-%d", poolName, i)
	providerID := "aws:///us-east-1a/i-" + name
	nc := &state.NodeClaim{}
	nc.Name = name
	nc.Labels = map[string]string{"karpenter.sh/nodepool": poolName, "kubernetes.io/arch": "amd64"}
	nc.Spec.NodeClassRef = state.NodeClassRef{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	nc.Status.ProviderID, nc.Status.ImageID = providerID, "ami-new"
	n := &corev1.Node{}
	n.Name = "node-" + name
	n.Labels = map[string]string{"karpenter.sh/nodepool": poolName, "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}
	n.Spec.ProviderID = providerID
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	m := member{nc, n}
	for _, o := range opts {
		o(&m)
	}
	return m
}

func notReady(m *member) { m.node.Status.Conditions[0].Status = corev1.ConditionFalse }
func tainted(m *member) {
	m.node.Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}}
}
func deleting(m *member)      { m.claim.DeletionTimestamp = &metav1.Time{Time: monday0830} }
func uninitialized(m *member) { delete(m.node.Labels, "karpenter.sh/initialized") }
func unmanaged(m *member)     { m.claim.Status.ProviderID = "aws:///elsewhere" }
func doNotDisrupt(m *member) {
	m.node.Annotations = map[string]string{"karpenter.sh/do-not-disrupt": "true"}
}
func oldImage(m *member) { m.claim.Status.ImageID = "ami-old" }

// rebooting: node repair reboots the node in place (Karpenter v1.15), which
// resets its initialized label and leaves it NotReady for a while.
func rebooting(m *member) {
	addCondition(m, "Rebooting", "Issued", monday0830)
	uninitialized(m)
	notReady(m)
}
func terminating(m *member) { addCondition(m, "InstanceTerminating", "", monday0830) }
func driftedSince(reason string, at time.Time) memberOpt {
	return func(m *member) { addCondition(m, "Drifted", reason, at) }
}

func addCondition(m *member, typ, reason string, at time.Time) {
	m.claim.Status.Conditions = append(m.claim.Status.Conditions,
		state.Condition{Type: typ, Status: "True", Reason: reason, LastTransitionTime: metav1.NewTime(at)})
}

func defaultClass() *state.EC2NodeClass {
	c := &state.EC2NodeClass{}
	c.Name = "default"
	c.Status.AMIs = []state.AMI{
		{ID: "ami-new", Name: "al2023-v2", Requirements: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}},
		{ID: "ami-old", Name: "al2023-v1", Requirements: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}},
	}
	return c
}

func poolOf(np *state.NodePool, members ...member) state.Pool {
	p := state.Pool{NodePool: np, NodeClasses: map[string]*state.EC2NodeClass{"default": defaultClass()}}
	for _, m := range members {
		p.NodeClaims = append(p.NodeClaims, m.claim)
		p.Nodes = append(p.Nodes, m.node)
	}
	return p
}

// healthy returns n healthy members of a pool.
func healthy(poolName string, n int) []member {
	out := make([]member, n)
	for i := range out {
		out[i] = newMember(poolName, i)
	}
	return out
}

// podOn is a running, ready pod of app on a node.
func podOn(node, namespace, name, app string) *state.Pod {
	p := &state.Pod{}
	p.Namespace, p.Name, p.Labels = namespace, name, map[string]string{"app": app}
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []state.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

// pdbFor is a PodDisruptionBudget of app allowing allowed disruptions.
func pdbFor(namespace, app string, allowed int32) *state.PodDisruptionBudget {
	b := &state.PodDisruptionBudget{}
	b.Namespace, b.Name = namespace, app
	b.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	b.Status = state.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	return b
}
