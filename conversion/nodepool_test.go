package conversion

import "testing"

// NodePool rows of the facts table, v1beta1 -> v1.
func TestNodePoolToV1(t *testing.T) {
	runConversionCases(t, []conversionCase{
		{
			name: "expireAfter moves into the template, WhenUnderutilized gets 0s, name-only ref is completed",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default}
spec:
  weight: 10
  limits: {cpu: "1000"}
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 720h
    budgets: [{nodes: "10%"}]
  template:
    metadata: {labels: {team: a}}
    spec:
      nodeClassRef: {name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"name":"default"}'
spec:
  weight: 10
  limits: {cpu: "1000"}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets: [{nodes: "10%"}]
  template:
    metadata: {labels: {team: a}}
    spec:
      expireAfter: 720h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`,
		},
		{
			name: "WhenUnderutilized with consolidateAfter Never stays disabled",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: off}
spec:
  disruption: {consolidationPolicy: WhenUnderutilized, consolidateAfter: Never, expireAfter: Never}
  template: {spec: {nodeClassRef: {name: a, kind: EC2NodeClass}}}
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: off
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"kind":"EC2NodeClass","name":"a"}'
spec:
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never}
  template: {spec: {expireAfter: Never, nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
		},
		{
			name: "WhenEmpty keeps its consolidateAfter and durations keep their spelling",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: empty}
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    expireAfter: 8h
    budgets: [{nodes: "0", schedule: "0 9 * * mon-fri", duration: 8h}]
  template: {spec: {nodeClassRef: {name: a, kind: EC2NodeClass}}}
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: empty
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"kind":"EC2NodeClass","name":"a"}'
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    budgets: [{nodes: "0", schedule: "0 9 * * mon-fri", duration: 8h}]
  template: {spec: {expireAfter: 8h, nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
		},
		{
			name: "missing policy is the v1beta1 default and stays missing",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: d}
spec:
  disruption: {expireAfter: 720h}
  template: {spec: {nodeClassRef: {name: a, kind: EC2NodeClass}}}
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: d
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"kind":"EC2NodeClass","name":"a"}'
spec:
  disruption: {consolidateAfter: 0s}
  template: {spec: {expireAfter: 720h, nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
		},
		{
			name: "kubelet moves to Karpenter's annotation in Karpenter's field order, resources go",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: k, annotations: {team: a}}
spec:
  template:
    spec:
      nodeClassRef: {name: a, kind: EC2NodeClass}
      resources: {}
      kubelet:
        cpuCFSQuota: true
        evictionSoftGracePeriod: {memory.available: 1m}
        evictionSoft: {memory.available: 5%}
        maxPods: 110
        clusterDNS: [10.0.0.10]
        extra: kept
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: k
  annotations:
    team: a
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"kind":"EC2NodeClass","name":"a"}'
    compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"clusterDNS":["10.0.0.10"],"maxPods":110,"evictionSoft":{"memory.available":"5%"},"evictionSoftGracePeriod":{"memory.available":"1m"},"cpuCFSQuota":true,"extra":"kept"}'
spec:
  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
			restored: []string{"spec.template.spec.resources"},
		},
		{
			name: "apiVersion gives the group and is recorded in Karpenter's shape",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: g}
spec:
  template: {spec: {nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, name: a, kind: EC2NodeClass}}}
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: g
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"kind":"EC2NodeClass","name":"a","apiVersion":"karpenter.k8s.aws/v1beta1"}'
spec:
  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
		},
		{
			name: "unknown fields survive",
			to:   "v1",
			in: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: u}
spec:
  futureField: {a: 1}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: "1", extra: true}]}
  template: {spec: {nodeClassRef: {name: a, kind: EC2NodeClass}, other: [1, 2.5]}}
status: {conditions: [{type: Ready, status: "True"}], resources: {cpu: "4"}}
`,
			want: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: u
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"kind":"EC2NodeClass","name":"a"}'
spec:
  futureField: {a: 1}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: "1", extra: true}]}
  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}, other: [1, 2.5]}}
status: {conditions: [{type: Ready, status: "True"}], resources: {cpu: "4"}}
`,
		},
	})
}

// NodePool rows of the facts table, v1 -> v1beta1.
func TestNodePoolToV1Beta1(t *testing.T) {
	runConversionCases(t, []conversionCase{
		{
			name: "a NodePool born v1 records only that its way back adds no nodeclass-reference annotation",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default, annotations: {karpenter.sh/stored-version-migrated: "true"}}
spec:
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "10%"}]}
  template:
    spec:
      expireAfter: 720h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
`,
			want: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default, annotations: {karpenter.sh/stored-version-migrated: "true"}}
spec:
  disruption: {consolidationPolicy: WhenUnderutilized, expireAfter: 720h, budgets: [{nodes: "10%"}]}
  template:
    spec:
      nodeClassRef: {kind: EC2NodeClass, name: default}
      requirements: []
`,
			restored: []string{"metadata.annotations[compatibility.karpenter.sh/v1beta1-nodeclass-reference]"},
		},
		{
			name: "a NodePool converted from v1beta1 by Karpenter or karpgate needs no restore annotation",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"name":"default"}'
spec:
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "10%"}]}
  template:
    spec:
      expireAfter: 720h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
`,
			want: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default}
spec:
  disruption: {consolidationPolicy: WhenUnderutilized, expireAfter: 720h, budgets: [{nodes: "10%"}]}
  template:
    spec:
      nodeClassRef: {name: default}
      requirements: []
`,
		},
		{
			name: "v1-only fields ride in the restore annotation",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: rich}
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 5m
    budgets:
      - {nodes: "10%"}
      - {nodes: "0", reasons: [Drifted], schedule: "@daily", duration: 8h}
      - {nodes: "5", reasons: []}
  template:
    spec:
      expireAfter: 8h
      terminationGracePeriod: 48h
      nodeClassRef: {group: example.com, kind: MyNodeClass, name: x}
`,
			want: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: rich}
spec:
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 8h
    budgets:
      - {nodes: "10%"}
      - {nodes: "0", schedule: "@daily", duration: 8h}
      - {nodes: "5"}
  template:
    spec:
      nodeClassRef: {kind: MyNodeClass, name: x}
`,
			restored: []string{
				"metadata.annotations",
				"spec.disruption.budgets[1]",
				"spec.disruption.budgets[2]",
				"spec.disruption.consolidateAfter",
				"spec.template.spec.nodeClassRef.group",
				"spec.template.spec.terminationGracePeriod",
			},
		},
		{
			name: "WhenEmptyOrUnderutilized with Never stays Never",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: off}
spec:
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never}
  template: {spec: {expireAfter: Never, nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
			want: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: off}
spec:
  disruption: {consolidationPolicy: WhenUnderutilized, consolidateAfter: Never, expireAfter: Never}
  template: {spec: {nodeClassRef: {kind: EC2NodeClass, name: a}}}
`,
			restored: []string{"metadata.annotations"},
		},
		{
			name: "WhenEmpty keeps consolidateAfter",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: e}
spec:
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 10m}
  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
			want: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: e}
spec:
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 10m}
  template: {spec: {nodeClassRef: {kind: EC2NodeClass, name: a}}}
`,
			restored: []string{"metadata.annotations"},
		},
		{
			name: "Karpenter's annotations are honoured and removed",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: migrated
  annotations:
    compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"evictionSoftGracePeriod":{"memory.available":"1m0s"},"maxPods":110}'
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"name":"a","apiVersion":"karpenter.k8s.aws/v1beta1"}'
spec:
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s}
  template: {spec: {expireAfter: 720h, nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: a}}}
`,
			want: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: migrated}
spec:
  disruption: {consolidationPolicy: WhenUnderutilized, expireAfter: 720h}
  template:
    spec:
      kubelet: {maxPods: 110, evictionSoftGracePeriod: {memory.available: 1m0s}}
      nodeClassRef: {name: a, apiVersion: karpenter.k8s.aws/v1beta1}
`,
			// Karpenter writes kubelet fields in its struct's order; this
			// annotation was written by hand, so its exact bytes ride along.
			restored: []string{"metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]"},
		},
		{
			name: "a recorded reference that no longer matches the v1 reference is stale",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: edited
  annotations:
    compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"name":"old"}'
spec:
  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: new}}}
`,
			want: `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: edited}
spec:
  template: {spec: {nodeClassRef: {kind: EC2NodeClass, name: new}}}
`,
			restored: []string{"metadata.annotations[compatibility.karpenter.sh/v1beta1-nodeclass-reference]"},
		},
	})
}
