package conversion

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// benchObjects are realistic objects, one per kind and source version.
var benchObjects = []struct{ name, to, yaml string }{
	{"NodePool/v1beta1-to-v1", "v1", `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default, uid: 5f0e9c5a-0000-4000-8000-000000000000, resourceVersion: "123456", generation: 3, creationTimestamp: "2024-08-01T10:00:00Z"}
spec:
  weight: 10
  limits: {cpu: "1000", memory: 1000Gi}
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 720h
    budgets: [{nodes: "10%"}, {nodes: "0", schedule: "0 9 * * mon-fri", duration: 8h}]
  template:
    metadata: {labels: {team: platform}}
    spec:
      nodeClassRef: {name: default}
      kubelet: {maxPods: 110, systemReserved: {cpu: 100m, memory: 100Mi}}
      taints: [{key: example.com/dedicated, value: platform, effect: NoSchedule}]
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r], minValues: 2}
status: {resources: {cpu: "48", memory: 192Gi}, conditions: [{type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2024-08-01T10:00:00Z"}]}
`},
	{"NodePool/v1-to-v1beta1", "v1beta1", `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default, uid: 5f0e9c5a-0000-4000-8000-000000000000, resourceVersion: "123456", generation: 3, creationTimestamp: "2024-08-01T10:00:00Z"}
spec:
  weight: 10
  limits: {cpu: "1000", memory: 1000Gi}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets: [{nodes: "10%"}, {nodes: "0", reasons: [Drifted], schedule: "0 9 * * mon-fri", duration: 8h}]
  template:
    metadata: {labels: {team: platform}}
    spec:
      expireAfter: 720h
      terminationGracePeriod: 48h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: [{key: example.com/dedicated, value: platform, effect: NoSchedule}]
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r], minValues: 2}
status: {resources: {cpu: "48", memory: 192Gi}, conditions: [{type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2024-08-01T10:00:00Z"}]}
`},
	{"NodeClaim/v1beta1-to-v1", "v1", `
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: default-x7k2p, labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: spot}, uid: 5f0e9c5a-0000-4000-8000-000000000001, resourceVersion: "123457"}
spec:
  nodeClassRef: {name: default, kind: EC2NodeClass, apiVersion: karpenter.k8s.aws/v1beta1}
  kubelet: {maxPods: 110}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}, {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge, c5.large]}]
  resources: {requests: {cpu: 1500m, memory: 3Gi, pods: "12"}}
status: {nodeName: ip-10-0-0-1.ec2.internal, providerID: "aws:///us-east-1a/i-0123456789abcdef0", imageID: ami-0123, capacity: {cpu: "2", memory: 7Gi}, allocatable: {cpu: 1930m, memory: 6Gi}, conditions: [{type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2024-08-01T10:00:00Z"}]}
`},
	{"NodeClaim/v1-to-v1beta1", "v1beta1", `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: default-x7k2p, labels: {karpenter.sh/nodepool: default, karpenter.sh/capacity-type: spot}, uid: 5f0e9c5a-0000-4000-8000-000000000001, resourceVersion: "123457"}
spec:
  expireAfter: 720h
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}, {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge, c5.large]}]
  resources: {requests: {cpu: 1500m, memory: 3Gi, pods: "12"}}
status: {nodeName: ip-10-0-0-1.ec2.internal, providerID: "aws:///us-east-1a/i-0123456789abcdef0", imageID: ami-0123, lastPodEventTime: "2024-08-01T11:00:00Z", capacity: {cpu: "2", memory: 7Gi}, allocatable: {cpu: 1930m, memory: 6Gi}, conditions: [{type: Ready, status: "True", reason: Ready, message: "", lastTransitionTime: "2024-08-01T10:00:00Z"}]}
`},
	{"EC2NodeClass/v1beta1-to-v1", "v1", `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: default, uid: 5f0e9c5a-0000-4000-8000-000000000002, resourceVersion: "123458"}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-cluster
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: cluster}}]
  metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required}
  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Gi, volumeType: gp3, encrypted: true}}]
  tags: {team: platform}
status: {subnets: [{id: subnet-1, zone: us-east-1a, zoneID: use1-az1}], securityGroups: [{id: sg-1, name: nodes}], amis: [{id: ami-1, name: al2023, requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]}], instanceProfile: cluster_123}
`},
	{"EC2NodeClass/v1-to-v1beta1", "v1beta1", `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default, uid: 5f0e9c5a-0000-4000-8000-000000000002, resourceVersion: "123458"}
spec:
  amiSelectorTerms: [{alias: al2023@v20240807}]
  role: KarpenterNodeRole-cluster
  kubelet: {maxPods: 110}
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: cluster}}]
  metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 1, httpTokens: required}
  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Gi, volumeType: gp3, encrypted: true}}]
  tags: {team: platform}
status: {subnets: [{id: subnet-1, zone: us-east-1a, zoneID: use1-az1}], securityGroups: [{id: sg-1, name: nodes}], amis: [{id: ami-1, name: al2023, requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]}], instanceProfile: cluster_123}
`},
}

// BenchmarkConvert measures Convert per kind and direction against a plain
// JSON decode + encode of the same object in the same run: convert-ns/op is
// Convert alone, json-ns/op the baseline, x-json their ratio.
func BenchmarkConvert(b *testing.B) {
	ctx := context.Background()
	opts := Options{NodePools: nodePools{"default": "720h"}}
	for _, bo := range benchObjects {
		b.Run(bo.name, func(b *testing.B) {
			obj := yamlObject(b, bo.yaml)
			data, err := json.Marshal(obj)
			if err != nil {
				b.Fatal(err)
			}
			var convert, baseline time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				decoded, err := DecodeObject(data)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(decoded); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := Convert(ctx, obj, bo.to, opts); err != nil {
					b.Fatal(err)
				}
				convert += time.Since(mid)
				baseline += mid.Sub(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(convert.Nanoseconds())/n, "convert-ns/op")
			b.ReportMetric(float64(baseline.Nanoseconds())/n, "json-ns/op")
			b.ReportMetric(float64(convert)/float64(baseline), "x-json")
			b.ReportMetric(n/convert.Seconds(), "conversions/s")
		})
	}
}
