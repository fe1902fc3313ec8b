package state

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

var decoder = serializer.NewCodecFactory(NewScheme()).UniversalDeserializer()

// decodeFixture decodes a testdata object the way the loop's informers do:
// through the scheme's codec, into the registered Go type.
func decodeFixture(t testing.TB, name string) runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return obj
}

func TestDecodedAndTrimmedViewsKeepWhatTheLoopReads(t *testing.T) {
	tests := []struct {
		fixture string
		check   func(t *testing.T, obj runtime.Object)
	}{
		{"nodepool.json", func(t *testing.T, obj runtime.Object) {
			np := obj.(*NodePool)
			if len(np.Spec.Disruption.Budgets) != 2 || np.Spec.Template.Spec.NodeClassRef.Name != "default" {
				t.Errorf("budgets %v, nodeClassRef %+v", np.Spec.Disruption.Budgets, np.Spec.Template.Spec.NodeClassRef)
			}
			want := map[string]string{"karpgate.io/rollout-guard-resumed": "2026-01-04T10:00:00Z"}
			if !reflect.DeepEqual(np.Annotations, want) || np.ManagedFields != nil || np.Labels != nil {
				t.Errorf("metadata kept: annotations %v, managedFields %d, labels %v", np.Annotations, len(np.ManagedFields), np.Labels)
			}
		}},
		{"nodeclaim.json", func(t *testing.T, obj runtime.Object) {
			nc := obj.(*NodeClaim)
			wantLabels := map[string]string{"karpenter.sh/nodepool": "default", "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}
			if !reflect.DeepEqual(nc.Labels, wantLabels) {
				t.Errorf("labels = %v, want %v", nc.Labels, wantLabels)
			}
			if !reflect.DeepEqual(nc.Annotations, map[string]string{"karpenter.sh/do-not-disrupt": "true"}) {
				t.Errorf("annotations = %v", nc.Annotations)
			}
			var kept []string
			for _, c := range nc.Status.Conditions {
				kept = append(kept, c.Type+"="+c.Status)
			}
			if !reflect.DeepEqual(kept, []string{"Launched=True", "Registered=True", "Initialized=True", "Drifted=True", "Consolidatable=False"}) || nc.Condition("Drifted").Reason != "AMIDrift" {
				t.Errorf("conditions = %+v, want Launched, Registered, Initialized, Drifted and Consolidatable (a rollout plan's gates read the first two)", nc.Status.Conditions)
			}
			if nc.Spec.ExpireAfter != "720h" || nc.Status.NodeName == "" {
				t.Errorf("expireAfter %q, nodeName %q", nc.Spec.ExpireAfter, nc.Status.NodeName)
			}
			if nc.Status.ImageID != "ami-0a1b2c3d4e5f60718" || nc.Status.ProviderID != "aws:///us-east-1a/i-0123456789abcdef0" || nc.Spec.NodeClassRef.Kind != "EC2NodeClass" {
				t.Errorf("status/spec lost: %+v %+v", nc.Status, nc.Spec)
			}
			if nc.OwnerReferences != nil || nc.Finalizers != nil || nc.ManagedFields != nil || nc.UID == "" || nc.CreationTimestamp.IsZero() {
				t.Errorf("metadata not trimmed as intended: %+v", nc.ObjectMeta)
			}
		}},
		{"ec2nodeclass.json", func(t *testing.T, obj runtime.Object) {
			c := obj.(*EC2NodeClass)
			if len(c.Status.AMIs) != 4 || !c.Status.AMIs[3].Deprecated || len(c.Status.AMIs[2].Requirements) != 2 {
				t.Errorf("amis = %+v", c.Status.AMIs)
			}
			if c.Annotations != nil || c.Finalizers != nil {
				t.Errorf("metadata kept: %+v", c.ObjectMeta)
			}
		}},
		{"pod.json", func(t *testing.T, obj runtime.Object) {
			p := obj.(*Pod)
			if len(p.Labels) != 8 || p.Labels["pod-template-hash"] != "7d9f6c5b4" || p.Annotations != nil {
				t.Errorf("labels %v, annotations %v: want every label and no annotation", p.Labels, p.Annotations)
			}
			if p.UID != "" || p.ManagedFields != nil || p.OwnerReferences != nil || p.GenerateName != "" {
				t.Errorf("metadata not trimmed: %+v", p.ObjectMeta)
			}
			if p.Spec.NodeName != "ip-10-0-12-34.ec2.internal" || p.Spec.Tolerations != nil || p.Status.StartTime != nil {
				t.Errorf("spec %+v, start %v: want the node only", p.Spec, p.Status.StartTime)
			}
			if !reflect.DeepEqual(p.Status.Conditions, []PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}) || p.Status.Phase != corev1.PodRunning {
				t.Errorf("status = %+v", p.Status)
			}
		}},
		{"pdb.json", func(t *testing.T, obj runtime.Object) {
			b := obj.(*PodDisruptionBudget)
			if b.Spec.Selector.MatchLabels["app"] != "checkout" || b.Spec.MinAvailable.String() != "90%" || *b.Spec.UnhealthyPodEvictionPolicy != "AlwaysAllow" {
				t.Errorf("spec = %+v", b.Spec)
			}
			if b.Status.DisruptionsAllowed != 1 || b.Status.ExpectedPods != 10 || b.Annotations != nil || b.ManagedFields != nil {
				t.Errorf("status %+v, metadata %+v", b.Status, b.ObjectMeta)
			}
		}},
		{"node.json", func(t *testing.T, obj runtime.Object) {
			n := obj.(*corev1.Node)
			wantLabels := map[string]string{"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}
			if !reflect.DeepEqual(n.Labels, wantLabels) {
				t.Errorf("labels = %v", n.Labels)
			}
			if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "karpenter.sh/disrupted" || n.Spec.ProviderID == "" {
				t.Errorf("spec = %+v", n.Spec)
			}
			if len(n.Status.Conditions) != 1 || !NodeReady(n) || !n.Status.Conditions[0].LastHeartbeatTime.IsZero() {
				t.Errorf("conditions = %+v, want Ready only, without heartbeat", n.Status.Conditions)
			}
			if n.Status.Images != nil || n.Status.Capacity != nil || n.Status.NodeInfo.BootID != "" {
				t.Errorf("status not trimmed: %+v", n.Status)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			obj := decodeFixture(t, tt.fixture)
			trimmed, err := Trim(obj)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, trimmed.(runtime.Object))
			again := trimmed.(runtime.Object).DeepCopyObject()
			if _, err := Trim(again); err != nil || !reflect.DeepEqual(again, trimmed) {
				t.Errorf("trimming twice changed the object")
			}
		})
	}
}

func TestBudgetsKeepAbsentApartFromEmpty(t *testing.T) {
	tests := []struct {
		name, budgets string
		wantNil       bool
		wantLen       int
	}{
		{"absent", ``, true, 0},
		{"null", `,"budgets":null`, true, 0},
		{"empty", `,"budgets":[]`, false, 0},
		{"two", `,"budgets":[{"nodes":"1"},{"nodes":"0","reasons":[]}]`, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"disruption":{"consolidateAfter":"0s"` + tt.budgets + `}}}`
			obj, _, err := decoder.Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := obj.(*NodePool).Spec.Disruption.Budgets
			if (got == nil) != tt.wantNil || len(got) != tt.wantLen {
				t.Errorf("budgets = %#v, want nil=%v len=%d", got, tt.wantNil, tt.wantLen)
			}
			if copied := obj.(*NodePool).DeepCopy().Spec.Disruption.Budgets; (copied == nil) != tt.wantNil {
				t.Errorf("DeepCopy turned %#v into %#v", got, copied)
			}
		})
	}
}

func TestSnapshotPoolsGroupsByLabelAndReferencedClasses(t *testing.T) {
	pool := func(name, class string) *NodePool {
		np := &NodePool{}
		np.Name = name
		np.Spec.Template.Spec.NodeClassRef = NodeClassRef{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: class}
		return np
	}
	claim := func(name, pool, class string) *NodeClaim {
		nc := &NodeClaim{}
		nc.Name, nc.Labels = name, map[string]string{"karpenter.sh/nodepool": pool}
		nc.Spec.NodeClassRef = NodeClassRef{Name: class}
		return nc
	}
	node := func(name, pool string) *corev1.Node {
		n := &corev1.Node{}
		n.Name, n.Labels = name, map[string]string{"karpenter.sh/nodepool": pool}
		return n
	}
	class := func(name string) *EC2NodeClass {
		c := &EC2NodeClass{}
		c.Name = name
		return c
	}
	s := Snapshot{
		NodePools:   []*NodePool{pool("b", "new"), pool("a", "default")},
		NodeClaims:  []*NodeClaim{claim("b-1", "b", "old"), claim("a-1", "a", "default"), claim("orphan", "gone", "default")},
		Nodes:       []*corev1.Node{node("n-a", "a"), node("n-x", "")},
		NodeClasses: []*EC2NodeClass{class("default"), class("old"), class("unused")},
	}
	pools := s.Pools()
	if len(pools) != 2 || pools[0].NodePool.Name != "a" || pools[1].NodePool.Name != "b" {
		t.Fatalf("pools not sorted by name: %+v", pools)
	}
	a, b := pools[0], pools[1]
	if len(a.NodeClaims) != 1 || len(a.Nodes) != 1 || len(a.NodeClasses) != 1 || a.NodeClasses["default"] == nil {
		t.Errorf("pool a = %d claims, %d nodes, classes %v", len(a.NodeClaims), len(a.Nodes), a.NodeClasses)
	}
	// b's template names "new", which does not exist; its claim still uses "old".
	if len(b.NodeClaims) != 1 || len(b.Nodes) != 0 || len(b.NodeClasses) != 1 || b.NodeClasses["old"] == nil {
		t.Errorf("pool b = %d claims, %d nodes, classes %v", len(b.NodeClaims), len(b.Nodes), b.NodeClasses)
	}
	if got := b.NodeClassNames(); !reflect.DeepEqual(got, []string{"new", "old"}) {
		t.Errorf("NodeClassNames = %v", got)
	}
}

func TestPodTrimKeepsWhatDecidesDisruption(t *testing.T) {
	obj := decodeFixture(t, "pod.json").(*Pod)
	obj.Annotations = map[string]string{"karpenter.sh/do-not-disrupt": "2h", "other": "x"}
	obj.OwnerReferences = append(obj.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u"})
	obj.Spec.Tolerations = append(obj.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
	if _, err := Trim(obj); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj.Annotations, map[string]string{"karpenter.sh/do-not-disrupt": "2h"}) || obj.Status.StartTime == nil {
		t.Errorf("a do-not-disrupt duration needs its start time: annotations %v, start %v", obj.Annotations, obj.Status.StartTime)
	}
	if !reflect.DeepEqual(obj.OwnerReferences, []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet"}}) {
		t.Errorf("owners = %+v, want the DaemonSet only", obj.OwnerReferences)
	}
	if !reflect.DeepEqual(obj.Spec.Tolerations, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}) {
		t.Errorf("tolerations = %+v, want the one that tolerates karpenter.sh/disrupted", obj.Spec.Tolerations)
	}
}

func TestToleratesDisrupted(t *testing.T) {
	for _, tt := range []struct {
		tol  corev1.Toleration
		want bool
	}{
		{corev1.Toleration{Operator: corev1.TolerationOpExists}, true},
		{corev1.Toleration{Key: "karpenter.sh/disrupted", Operator: corev1.TolerationOpExists}, true},
		{corev1.Toleration{Key: "karpenter.sh/disrupted", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, true},
		{corev1.Toleration{Key: "karpenter.sh/disrupted", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, false},
		{corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}, false},
	} {
		if got := ToleratesDisrupted(tt.tol); got != tt.want {
			t.Errorf("ToleratesDisrupted(%+v) = %v", tt.tol, got)
		}
	}
}
