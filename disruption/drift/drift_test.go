package drift

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karpgate/karpgate/disruption/state"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

type claimOpt func(*state.NodeClaim)

func newClaim(name string, opts ...claimOpt) *state.NodeClaim {
	nc := &state.NodeClaim{}
	nc.Name = name
	nc.Labels = map[string]string{"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}
	nc.Spec.NodeClassRef = state.NodeClassRef{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	nc.Status.ImageID = "ami-old"
	for _, o := range opts {
		o(nc)
	}
	return nc
}

func drifted(reason string, since time.Time) claimOpt {
	return func(nc *state.NodeClaim) {
		nc.Status.Conditions = append(nc.Status.Conditions, state.Condition{Type: "Drifted", Status: "True", Reason: reason, LastTransitionTime: metav1.NewTime(since)})
	}
}

func label(k, v string) claimOpt { return func(nc *state.NodeClaim) { nc.Labels[k] = v } }
func image(id string) claimOpt   { return func(nc *state.NodeClaim) { nc.Status.ImageID = id } }

func TestSummarizeCountsDriftedByReasonAndFindsTheOldest(t *testing.T) {
	claims := []*state.NodeClaim{
		newClaim("a", drifted("AMIDrift", t0.Add(-time.Hour))),
		newClaim("b", drifted("NodePoolDrifted", t0.Add(-3*time.Hour))),
		newClaim("c", drifted("AMIDrift", t0.Add(-3*time.Hour))),
		newClaim("d", func(nc *state.NodeClaim) {
			nc.Status.Conditions = []state.Condition{{Type: "Drifted", Status: "False", LastTransitionTime: metav1.NewTime(t0.Add(-9 * time.Hour))}}
		}),
		newClaim("e"),
	}
	got := Summarize(claims)
	oldest := t0.Add(-3 * time.Hour)
	want := Summary{Total: 3, ByReason: map[string]int{"AMIDrift": 2, "NodePoolDrifted": 1}, OldestSince: &oldest, OldestNodeClaim: "b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if got := got.Reasons(); !reflect.DeepEqual(got, []string{"AMIDrift", "NodePoolDrifted"}) {
		t.Errorf("Reasons = %v", got)
	}
	if got := Summarize(claims[3:]); got.Total != 0 || got.OldestSince != nil || got.ByReason != nil {
		t.Errorf("no drift gave %+v", got)
	}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

// amis is status.amis as Karpenter orders it: newest, non-deprecated first.
var amis = []state.AMI{
	{ID: "ami-new", Name: "standard-v2", Requirements: []corev1.NodeSelectorRequirement{
		req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "amd64"),
		req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpDoesNotExist)}},
	{ID: "ami-new-arm", Requirements: []corev1.NodeSelectorRequirement{
		req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "arm64"),
		req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpDoesNotExist)}},
	{ID: "ami-new-gpu", Requirements: []corev1.NodeSelectorRequirement{
		req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "amd64"),
		req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpExists)}},
	{ID: "ami-old", Deprecated: true, Requirements: []corev1.NodeSelectorRequirement{
		req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "amd64"),
		req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpDoesNotExist)}},
}

func TestWillDriftComparesTheImageWithTheNewestCompatibleAMI(t *testing.T) {
	tests := []struct {
		name          string
		claim         *state.NodeClaim
		amis          []state.AMI
		wantPending   *Pending
		wantUndecided bool
	}{
		{"an old image drifts to the newest standard AMI", newClaim("c"), amis,
			&Pending{NodeClaim: "c", ImageID: "ami-old", Newest: "ami-new", NewestName: "standard-v2"}, false},
		{"the newest standard AMI is current", newClaim("c", image("ami-new")), amis, nil, false},
		{"arm64 skips the amd64 AMI", newClaim("c", label("kubernetes.io/arch", "arm64"), image("ami-new-arm")), amis, nil, false},
		{"a GPU instance is matched by Exists, not by the standard AMI", newClaim("c", label("karpenter.k8s.aws/instance-gpu-count", "1"), image("ami-new-gpu")), amis, nil, false},
		{"a GPU instance on the standard AMI drifts", newClaim("c", label("karpenter.k8s.aws/instance-gpu-count", "1"), image("ami-new")), amis,
			&Pending{NodeClaim: "c", ImageID: "ami-new", Newest: "ami-new-gpu"}, false},
		{"no compatible AMI at all drifts, as in Karpenter", newClaim("c", label("kubernetes.io/arch", "s390x")), amis,
			&Pending{NodeClaim: "c", ImageID: "ami-old"}, false},
		{"already drifted is counted as drifted, not pending", newClaim("c", drifted("AMIDrift", t0)), amis, nil, false},
		{"being deleted", newClaim("c", func(nc *state.NodeClaim) { nc.DeletionTimestamp = &metav1.Time{Time: t0} }), amis, nil, false},
		{"terminating", newClaim("c", func(nc *state.NodeClaim) {
			nc.Status.Conditions = []state.Condition{{Type: "InstanceTerminating", Status: "True"}}
		}), amis, nil, false},
		{"no image recorded: Karpenter's check fails too", newClaim("c", image("")), amis, nil, false},
		{"class without AMIs: Karpenter's check fails too", newClaim("c"), nil, nil, false},
		{"another node class kind", newClaim("c", func(nc *state.NodeClaim) { nc.Spec.NodeClassRef.Kind = "AKSNodeClass" }), amis, nil, false},
		{"a requirement on a key karpgate does not keep", newClaim("c"), []state.AMI{{ID: "ami-x", Requirements: []corev1.NodeSelectorRequirement{
			req("example.com/custom", corev1.NodeSelectorOpIn, "a")}}}, nil, true},
		{"Gt compares integers", newClaim("c", label("karpenter.k8s.aws/instance-gpu-count", "8"), image("ami-big")), []state.AMI{
			{ID: "ami-big", Requirements: []corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpGt, "4")}}}, nil, false},
		{"Lt excludes larger counts", newClaim("c", label("karpenter.k8s.aws/instance-gpu-count", "8"), image("ami-small")), []state.AMI{
			{ID: "ami-small", Requirements: []corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpLt, "4")}}},
			&Pending{NodeClaim: "c", ImageID: "ami-small"}, false},
		{"NotIn passes an absent label", newClaim("c", image("ami-any")), []state.AMI{
			{ID: "ami-any", Requirements: []corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-accelerator-count", corev1.NodeSelectorOpNotIn, "1")}}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class := &state.EC2NodeClass{}
			class.Status.AMIs = tt.amis
			got := WillDrift([]*state.NodeClaim{tt.claim}, map[string]*state.EC2NodeClass{"default": class})
			var want AMIOutlook
			if tt.wantPending != nil {
				want.Pending = []Pending{*tt.wantPending}
			}
			if !reflect.DeepEqual(got.Pending, want.Pending) {
				t.Errorf("pending = %+v, want %+v", got.Pending, want.Pending)
			}
			if (len(got.Undecided) > 0) != tt.wantUndecided {
				t.Errorf("undecided = %+v, want undecided %v", got.Undecided, tt.wantUndecided)
			}
		})
	}
}

func TestWillDriftSkipsClaimsOfMissingClasses(t *testing.T) {
	got := WillDrift([]*state.NodeClaim{newClaim("c")}, map[string]*state.EC2NodeClass{})
	if len(got.Pending)+len(got.Undecided) != 0 {
		t.Errorf("a NodeClaim whose EC2NodeClass is missing was judged: %+v", got)
	}
}
