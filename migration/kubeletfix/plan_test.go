package kubeletfix

import (
	"strings"
	"testing"

	"github.com/karpgate/karpgate/migration/snapshot"
)

const cluster = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec: {role: r, kubelet: {maxPods: 30}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: spot}
spec: {role: r}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"maxPods":110}'}}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: b, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"maxPods":30}'}}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: s, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"maxPods":60}'}}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: spot}}}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: broken, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: 'maxPods=3'}}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: spot}}}}
---
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: still-beta}
spec: {template: {spec: {nodeClassRef: {name: default}, kubelet: {maxPods: 1}}}}
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: a-1, labels: {karpenter.sh/nodepool: a}}
spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: a-2, labels: {karpenter.sh/nodepool: a}}
spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
`

func TestPlanForAndSteps(t *testing.T) {
	s, err := snapshot.FromFiles([]string{"-"}, strings.NewReader(cluster))
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanFor(s)
	if len(plan.Unplaced) != 1 || plan.Unplaced[0].Pool.Name() != "broken" || !strings.Contains(plan.Unplaced[0].Reason, "not a JSON object") {
		t.Errorf("unplaced: %+v", plan.Unplaced)
	}
	var got []string
	replaced := 0
	for _, step := range plan.Steps() {
		got = append(got, step.Object+": "+step.Change)
		replaced += step.Replaces
	}
	want := []string{
		// b runs with default's kubelet already: a and the v1beta1 NodePool
		// (in files only) split off.
		`EC2NodeClass/default-a: created as a copy of default with spec.kubelet {"maxPods":110}, the block of NodePool a`,
		`EC2NodeClass/default-still-beta: created as a copy of default with spec.kubelet {"maxPods":1}, the block of NodePool still-beta`,
		`NodePool/a: nodeClassRef.name default -> default-a, annotation compatibility.karpenter.sh/v1beta1-kubelet-conversion removed`,
		`NodePool/still-beta: nodeClassRef.name default -> default-still-beta, spec.template.spec.kubelet goes (karpgate convert moves it)`,
		`NodePool/b: annotation compatibility.karpenter.sh/v1beta1-kubelet-conversion removed`,
		// spot has no kubelet and one NodePool: the block moves in, no drift.
		`EC2NodeClass/spot: spec.kubelet set to {"maxPods":60}, the block of NodePool s`,
		`NodePool/s: annotation compatibility.karpenter.sh/v1beta1-kubelet-conversion removed`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if replaced != 2 {
		t.Errorf("%d NodeClaims replaced, want NodePool a's 2", replaced)
	}
}
