package conversion

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestMalformedInputNamesObjectAndField(t *testing.T) {
	tests := []struct {
		name, in, to, want string
	}{
		{"not a Karpenter kind", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, "v1",
			`ConfigMap/c: apiVersion: "v1" kind "ConfigMap" is not a Karpenter`},
		{"unknown version", `{apiVersion: karpenter.sh/v2, kind: NodePool, metadata: {name: p}, spec: {}}`, "v1",
			`NodePool/p: apiVersion: "karpenter.sh/v2"`},
		{"kind in the wrong group", `{apiVersion: karpenter.sh/v1, kind: EC2NodeClass, metadata: {name: p}, spec: {}}`, "v1beta1",
			`EC2NodeClass/p: apiVersion`},
		{"kind is not a string", `{apiVersion: karpenter.sh/v1, kind: 7, metadata: {name: p}}`, "v1beta1",
			`<no kind>/p: kind: want a string, got a number`},
		{"unknown target version", `{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p}, spec: {}}`, "v2",
			`NodePool/p: cannot convert to version "v2"`},
		{"missing spec", `{apiVersion: karpenter.sh/v1beta1, kind: NodePool, metadata: {name: p}}`, "v1",
			`NodePool/p: spec: missing`},
		{"spec is a list", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: []}`, "v1beta1",
			`EC2NodeClass/e: spec: want a map, got a list`},
		{"policy is a number", `{apiVersion: karpenter.sh/v1beta1, kind: NodePool, metadata: {name: p}, spec: {disruption: {consolidationPolicy: 5}}}`, "v1",
			`NodePool/p: spec.disruption.consolidationPolicy: want a string, got a number`},
		{"expireAfter is a map", `{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p}, spec: {template: {spec: {expireAfter: {a: 1}}}}}`, "v1beta1",
			`NodePool/p: spec.template.spec.expireAfter: want a string, got a map`},
		{"budgets are a string", `{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p}, spec: {disruption: {budgets: "10%"}}}`, "v1beta1",
			`NodePool/p: spec.disruption.budgets: want a list, got a string`},
		{"a budget is a string", `{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p}, spec: {disruption: {budgets: ["10%"]}}}`, "v1beta1",
			`NodePool/p: spec.disruption.budgets[0]: want a map, got a string`},
		{"kubelet maxPods is a string", `{apiVersion: karpenter.sh/v1beta1, kind: NodePool, metadata: {name: p}, spec: {template: {spec: {kubelet: {maxPods: "110"}}}}}`, "v1",
			`NodePool/p: spec.template.spec.kubelet.maxPods: want an integer, got a string`},
		{"kubelet reserved value is a number", `{apiVersion: karpenter.sh/v1beta1, kind: NodeClaim, metadata: {name: c}, spec: {kubelet: {systemReserved: {cpu: 1}}}}`, "v1",
			`NodeClaim/c: spec.kubelet.systemReserved.cpu: want a string, got a number`},
		{"nodeClassRef name is a number", `{apiVersion: karpenter.sh/v1beta1, kind: NodePool, metadata: {name: p}, spec: {template: {spec: {nodeClassRef: {name: 3}}}}}`, "v1",
			`NodePool/p: spec.template.spec.nodeClassRef.name: want a string, got a number`},
		{"bad JSON in the kubelet annotation",
			`{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: "{maxPods"}}, spec: {}}`, "v1beta1",
			`NodePool/p: metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]: not valid JSON`},
		{"kubelet annotation is a list",
			`{apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: {name: c, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: "[1]"}}, spec: {}}`, "v1beta1",
			`NodeClaim/c: metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]: want a JSON object, got a list`},
		{"kubelet annotation with a wrong type",
			`{apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: {name: c, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"maxPods":"x"}'}}, spec: {}}`, "v1beta1",
			`NodeClaim/c: metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion].maxPods: want an integer`},
		{"bad JSON in the nodeclass reference annotation",
			`{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p, annotations: {compatibility.karpenter.sh/v1beta1-nodeclass-reference: "nope"}}, spec: {}}`, "v1beta1",
			`NodePool/p: metadata.annotations[compatibility.karpenter.sh/v1beta1-nodeclass-reference]: not valid JSON`},
		{"annotation value is not a string",
			`{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p, annotations: {compatibility.karpenter.sh/v1beta1-nodeclass-reference: 1}}, spec: {}}`, "v1beta1",
			`NodePool/p: metadata.annotations[compatibility.karpenter.sh/v1beta1-nodeclass-reference]: want a string, got a number`},
		{"annotations are a list", `{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p, annotations: [a]}, spec: {}}`, "v1beta1",
			`NodePool/p: metadata.annotations: want a map, got a list`},
		{"nodepool label is a number", `{apiVersion: karpenter.sh/v1beta1, kind: NodeClaim, metadata: {name: c, labels: {karpenter.sh/nodepool: 1}}, spec: {}}`, "v1",
			`NodeClaim/c: metadata.labels[karpenter.sh/nodepool]: want a string, got a number`},
		{"alias without a version", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiSelectorTerms: [{alias: al2023}]}}`, "v1beta1",
			`EC2NodeClass/e: spec.amiSelectorTerms[0].alias: malformed alias "al2023"`},
		{"alias with two versions", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiSelectorTerms: [{alias: al2@a@b}]}}`, "v1beta1",
			`EC2NodeClass/e: spec.amiSelectorTerms[0].alias: malformed alias "al2@a@b"`},
		{"alias of an unknown family", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiSelectorTerms: [{alias: ubuntu@latest}]}}`, "v1beta1",
			`EC2NodeClass/e: spec.amiSelectorTerms[0].alias: alias "ubuntu@latest" names an unknown AMI family`},
		{"upper-case alias family", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiSelectorTerms: [{alias: AL2@latest}]}}`, "v1beta1",
			`EC2NodeClass/e: spec.amiSelectorTerms[0].alias: alias "AL2@latest" names an unknown AMI family`},
		{"pinned Windows alias", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiSelectorTerms: [{alias: windows2019@v1}]}}`, "v1beta1",
			`EC2NodeClass/e: spec.amiSelectorTerms[0].alias: alias "windows2019@v1" pins a Windows AMI`},
		{"alias next to other terms", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiSelectorTerms: [{id: ami-1}, {alias: al2@latest}]}}`, "v1beta1",
			`EC2NodeClass/e: spec.amiSelectorTerms[1].alias: an alias must be the only amiSelectorTerm`},
		{"alias is a number", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiSelectorTerms: [{alias: 2}]}}`, "v1beta1",
			`EC2NodeClass/e: spec.amiSelectorTerms[0].alias: want a string, got a number`},
		{"pinned Windows version annotation", `{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: e, annotations: {compatibility.karpenter.k8s.aws/v1-alias-version: v2}}, spec: {amiFamily: Windows2022}}`, "v1",
			`EC2NodeClass/e: metadata.annotations[compatibility.karpenter.k8s.aws/v1-alias-version]: alias "windows2022@v2" pins a Windows AMI`},
		{"empty alias version annotation", `{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: e, annotations: {compatibility.karpenter.k8s.aws/v1-alias-version: ""}}, spec: {amiFamily: AL2}}`, "v1",
			`EC2NodeClass/e: metadata.annotations[compatibility.karpenter.k8s.aws/v1-alias-version]: malformed alias "al2@"`},
		{"unknown Ubuntu step", `{apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: e, annotations: {compatibility.karpenter.k8s.aws/v1beta1-ubuntu: "amiFamily,everything"}}, spec: {amiFamily: AL2}}`, "v1beta1",
			`EC2NodeClass/e: metadata.annotations[compatibility.karpenter.k8s.aws/v1beta1-ubuntu]: unknown Ubuntu compatibility step "everything"`},
		{"unknown AMI family", `{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiFamily: Debian}}`, "v1",
			`EC2NodeClass/e: spec.amiFamily: unknown AMI family "Debian"`},
		{"missing AMI family", `{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: e}, spec: {role: r}}`, "v1",
			`EC2NodeClass/e: spec.amiFamily: missing; v1beta1 requires it`},
		{"terms are a map", `{apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, metadata: {name: e}, spec: {amiFamily: AL2, amiSelectorTerms: {id: ami-1}}}`, "v1",
			`EC2NodeClass/e: spec.amiSelectorTerms: want a list, got a map`},
		{"bad restore annotation", `{apiVersion: karpenter.sh/v1beta1, kind: NodePool, metadata: {name: p, annotations: {karpgate.io/restore-v1: "{"}}, spec: {}}`, "v1",
			`NodePool/p: metadata.annotations[karpgate.io/restore-v1]: not valid JSON`},
		{"restore annotation outside spec", `{apiVersion: karpenter.sh/v1beta1, kind: NodePool, metadata: {name: p, annotations: {karpgate.io/restore-v1: '{"records":[{"path":["metadata","name"],"original":"x"}]}'}}, spec: {}}`, "v1",
			`NodePool/p: metadata.annotations[karpgate.io/restore-v1]: record 0: path ["metadata","name"] is outside spec`},
		{"restore annotation for the version the object is in", `{apiVersion: karpenter.sh/v1beta1, kind: NodePool, metadata: {name: p, annotations: {karpgate.io/restore-v1beta1: "{}"}}, spec: {}}`, "v1",
			`NodePool/p: metadata.annotations[karpgate.io/restore-v1beta1]: karpgate writes this annotation only on objects that are not v1beta1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Convert(context.Background(), yamlObject(t, tt.in), tt.to, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v\nwant one containing %q", err, tt.want)
			}
			var convErr *Error
			if !errors.As(err, &convErr) {
				t.Fatalf("want a *conversion.Error, got %T", err)
			}
		})
	}
}

func TestNilObject(t *testing.T) {
	if _, err := Convert(context.Background(), nil, "v1", Options{}); err == nil {
		t.Fatal("want an error for a nil object")
	}
}

func TestSameVersionIsAnUnchangedCopy(t *testing.T) {
	in := yamlObject(t, `{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p, annotations: {karpgate.io/restore-v1: junk}}, spec: {template: {spec: {terminationGracePeriod: 1h}}}}`)
	out, err := Convert(context.Background(), in, "v1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(in, out) {
		t.Fatalf("changed: %s", mustJSON(out))
	}
	out["spec"].(map[string]any)["template"] = nil
	if in["spec"].(map[string]any)["template"] == nil {
		t.Fatal("the result shares maps with the input")
	}
}
