package conversion

import (
	"fmt"
	"strings"
	"testing"
)

func TestEC2NodeClassToV1(t *testing.T) {
	cases := []conversionCase{
		{
			name: "a family without terms becomes a pinned alias from Karpenter's annotation",
			to:   "v1",
			in: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: pinned, annotations: {compatibility.karpenter.k8s.aws/v1-alias-version: v20240807}}
spec: {amiFamily: AL2023, role: r}
`,
			want: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: pinned}
spec: {amiSelectorTerms: [{alias: al2023@v20240807}], role: r}
`,
		},
		{
			name: "a family with terms keeps both, and the alias version annotation goes",
			to:   "v1",
			in: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: terms}
spec:
  amiFamily: AL2
  amiSelectorTerms: [{tags: {team: a}}, {name: my-ami, owner: self}]
  role: r
  metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required}
  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Gi, volumeType: gp3}}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{id: sg-1}]
  tags: {team: a}
  userData: echo hi
  instanceStorePolicy: RAID0
  detailedMonitoring: true
  associatePublicIPAddress: false
  context: ctx
`,
			want: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: terms}
spec:
  amiFamily: AL2
  amiSelectorTerms: [{tags: {team: a}}, {name: my-ami, owner: self}]
  role: r
  metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required}
  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Gi, volumeType: gp3}}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{id: sg-1}]
  tags: {team: a}
  userData: echo hi
  instanceStorePolicy: RAID0
  detailedMonitoring: true
  associatePublicIPAddress: false
  context: ctx
`,
		},
		{
			name: "Ubuntu without block devices or terms becomes incompatible AL2",
			to:   "v1",
			in: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: ubuntu}
spec: {amiFamily: Ubuntu, instanceProfile: p}
`,
			want: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: ubuntu, annotations: {compatibility.karpenter.k8s.aws/v1beta1-ubuntu: "amiFamily,blockDeviceMappings,incompatible"}}
spec:
  amiFamily: AL2
  amiSelectorTerms: [{id: ami-placeholder}]
  blockDeviceMappings: [{deviceName: /dev/sda1, rootVolume: true, ebs: {encrypted: true, volumeSize: 20Gi, volumeType: gp3}}]
  instanceProfile: p
`,
		},
		{
			name: "Ubuntu with block devices and terms only changes the family",
			to:   "v1",
			in: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: ubuntu}
spec: {amiFamily: Ubuntu, role: r, amiSelectorTerms: [{id: ami-123}], blockDeviceMappings: []}
`,
			want: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: ubuntu, annotations: {compatibility.karpenter.k8s.aws/v1beta1-ubuntu: amiFamily}}
spec: {amiFamily: AL2, role: r, amiSelectorTerms: [{id: ami-123}], blockDeviceMappings: []}
`,
		},
		{
			name: "Custom stays Custom",
			to:   "v1",
			in: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: custom}
spec: {amiFamily: Custom, role: r, amiSelectorTerms: [{id: ami-123}]}
`,
			want: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: custom}
spec: {amiFamily: Custom, role: r, amiSelectorTerms: [{id: ami-123}]}
`,
		},
	}
	for _, family := range []string{"AL2", "AL2023", "Bottlerocket", "Windows2019", "Windows2022"} {
		cases = append(cases, conversionCase{
			name: family + " without terms becomes its @latest alias",
			to:   "v1",
			in:   fmt.Sprintf("{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: n}, spec: {amiFamily: %s, role: r}}", family),
			want: fmt.Sprintf("{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: n}, spec: {amiSelectorTerms: [{alias: %s@latest}], role: r}}", strings.ToLower(family)),
		})
	}
	runConversionCases(t, cases)
}

func TestEC2NodeClassToV1Beta1(t *testing.T) {
	runConversionCases(t, []conversionCase{
		{
			name: "an alias becomes the family, a pinned version Karpenter's annotation, kubelet is restored later",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: pinned}
spec:
  amiSelectorTerms: [{alias: bottlerocket@v1.20.3}]
  role: r
  kubelet: {maxPods: 20, systemReserved: {cpu: 100m}}
`,
			want: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: pinned, annotations: {compatibility.karpenter.k8s.aws/v1-alias-version: v1.20.3}}
spec: {amiFamily: Bottlerocket, role: r}
`,
			restored: []string{"spec.kubelet"},
		},
		{
			name: "an @latest alias needs no annotation",
			to:   "v1beta1",
			in:   `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: l}, spec: {amiSelectorTerms: [{alias: windows2022@latest}], role: r}}`,
			want: `{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: l}, spec: {amiFamily: Windows2022, role: r}}`,
		},
		{
			name:     "an explicit family next to its alias is restored",
			to:       "v1beta1",
			in:       `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: l}, spec: {amiFamily: AL2023, amiSelectorTerms: [{alias: al2023@latest}], role: r}}`,
			want:     `{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: l}, spec: {amiFamily: AL2023, role: r}}`,
			restored: []string{"spec.amiFamily"},
		},
		{
			name: "Karpenter's Ubuntu conversion is undone",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: ubuntu, annotations: {compatibility.karpenter.k8s.aws/v1beta1-ubuntu: "amiFamily,blockDeviceMappings,incompatible"}}
spec:
  amiFamily: AL2
  amiSelectorTerms: [{id: ami-placeholder}]
  blockDeviceMappings: [{deviceName: /dev/sda1, rootVolume: true, ebs: {encrypted: true, volumeSize: 20Gi, volumeType: gp3}}]
  role: r
`,
			want: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: ubuntu}
spec: {amiFamily: Ubuntu, role: r}
`,
		},
		{
			name: "Ubuntu steps edited in v1 since are kept",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: ubuntu, annotations: {compatibility.karpenter.k8s.aws/v1beta1-ubuntu: "amiFamily,blockDeviceMappings,incompatible"}}
spec:
  amiFamily: AL2
  amiSelectorTerms: [{id: ami-0ubuntu}]
  blockDeviceMappings: [{deviceName: /dev/sda1, rootVolume: true, ebs: {encrypted: true, volumeSize: 50Gi, volumeType: gp3}}]
  role: r
`,
			want: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: ubuntu}
spec:
  amiFamily: Ubuntu
  amiSelectorTerms: [{id: ami-0ubuntu}]
  blockDeviceMappings: [{deviceName: /dev/sda1, rootVolume: true, ebs: {encrypted: true, volumeSize: 50Gi, volumeType: gp3}}]
  role: r
`,
			restored: []string{"metadata.annotations[compatibility.karpenter.k8s.aws/v1beta1-ubuntu]"},
		},
		{
			name: "a stale Ubuntu annotation is not honoured once the family changed",
			to:   "v1beta1",
			in: `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: moved, annotations: {compatibility.karpenter.k8s.aws/v1beta1-ubuntu: "amiFamily,incompatible"}}
spec: {amiFamily: AL2023, amiSelectorTerms: [{id: ami-placeholder}], role: r}
`,
			want: `
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata: {name: moved}
spec: {amiFamily: AL2023, amiSelectorTerms: [{id: ami-placeholder}], role: r}
`,
			restored: []string{"metadata.annotations"},
		},
	})
}
