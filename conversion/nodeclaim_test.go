package conversion

import (
	"context"
	"strings"
	"testing"
)

func TestNodeClaimToV1(t *testing.T) {
	const v1beta1Claim = `
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: default-x7k2p, labels: {karpenter.sh/nodepool: default}}
spec:
  kubelet: {maxPods: 58}
  nodeClassRef: {name: default}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
  resources: {requests: {cpu: 100m}}
status: {nodeName: ip-10-0-0-1, providerID: aws:///us-east-1a/i-1}
`
	const v1Claim = `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-x7k2p
  labels: {karpenter.sh/nodepool: default}
  annotations:
    compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"maxPods":58}'
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"name":"default"}'
spec:
  expireAfter: %s
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
  resources: {requests: {cpu: 100m}}
status: {nodeName: ip-10-0-0-1, providerID: aws:///us-east-1a/i-1}
`
	runConversionCases(t, []conversionCase{
		{
			name:   "expireAfter comes from the NodePool",
			to:     "v1",
			in:     v1beta1Claim,
			want:   strings.Replace(v1Claim, "%s", "336h", 1),
			lookup: nodePools{"default": "336h"},
		},
		{
			name:   "a missing NodePool gives Never",
			to:     "v1",
			in:     v1beta1Claim,
			want:   strings.Replace(v1Claim, "%s", "Never", 1),
			lookup: nodePools{"other": "336h"},
		},
		{
			name: "no lookup at all gives Never",
			to:   "v1",
			in:   v1beta1Claim,
			want: strings.Replace(v1Claim, "%s", "Never", 1),
		},
		{
			name: "a NodeClaim without the nodepool label gives Never",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: orphan}
spec: {nodeClassRef: {name: a, kind: EC2NodeClass}, requirements: []}
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: orphan
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"kind":"EC2NodeClass","name":"a"}'
spec: {expireAfter: Never, nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}, requirements: []}
`,
			lookup: nodePools{"orphan": "1h"},
		},
	})
}

func TestNodeClaimToV1Beta1(t *testing.T) {
	const v1Claim = `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: c, labels: {karpenter.sh/nodepool: default}}
spec:
  expireAfter: 720h
  terminationGracePeriod: 1h
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: []
status: {nodeName: n, lastPodEventTime: "2024-08-01T10:00:00Z"}
`
	const v1beta1Claim = `
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: c, labels: {karpenter.sh/nodepool: default}}
spec:
  nodeClassRef: {kind: EC2NodeClass, name: default}
  requirements: []
status: {nodeName: n}
`
	runConversionCases(t, []conversionCase{
		{
			name:     "expireAfter the NodePool still gives is not recorded",
			to:       "v1beta1",
			in:       v1Claim,
			want:     v1beta1Claim,
			lookup:   nodePools{"default": "720h"},
			restored: []string{"metadata.annotations", "spec.terminationGracePeriod", "status.lastPodEventTime"},
		},
		{
			name:     "expireAfter the NodePool no longer gives is recorded, keeping the v1 spec immutable",
			to:       "v1beta1",
			in:       v1Claim,
			want:     v1beta1Claim,
			lookup:   nodePools{"default": "24h"},
			restored: []string{"metadata.annotations", "spec.expireAfter", "spec.terminationGracePeriod", "status.lastPodEventTime"},
		},
	})
}

func TestNodeClaimLookupFailureNamesTheNodePool(t *testing.T) {
	in := yamlObject(t, `
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: c, labels: {karpenter.sh/nodepool: gpu}}
spec: {nodeClassRef: {name: a}, requirements: []}
`)
	for _, tt := range []struct {
		name   string
		lookup NodePoolLookup
		want   string
	}{
		{"a failed lookup", failingLookup{}, `NodeClaim/c: spec.expireAfter: reading expireAfter of NodePool "gpu": connection refused; retry once the NodePool can be read`},
		{"a refused lookup says why and its own fix", refusingLookup{}, `NodeClaim/c: spec.expireAfter: cannot read expireAfter of NodePool "gpu": not for you; ask someone else`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Convert(context.Background(), in, "v1", Options{NodePools: tt.lookup})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// refusingLookup will not answer at all.
type refusingLookup struct{}

func (refusingLookup) ExpireAfter(context.Context, string) (string, bool, error) {
	return "", false, &LookupRefused{Reason: "not for you", Fix: "ask someone else"}
}
