package lint

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// FuzzRunWithSchema lints arbitrary input through every stage, the CRD
// schema stage included (v1beta1 objects go through conversion and back to
// their own field paths), judged by the linked release and by v1.0, whose
// facts refuse most of what the linked CRDs accept (schema_release.go):
// the only error allowed is input that does not parse, and no input may
// panic.
func FuzzRunWithSchema(f *testing.F) {
	for _, seed := range []string{
		string(corpus(10)),
		"apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\nspec: {template: {spec: {nodeClassRef: {apiVersion: x/y/z}, kubelet: {maxPods: x}}}, disruption: {expireAfter: 1d, consolidateAfter: 1}}\n",
		"apiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: b}\nspec: {amiFamily: Ubuntu, amiSelectorTerms: []}\n",
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: c, annotations: {karpgate.io/waive-KG806: because}}\nspec: {amiSelectorTerms: [{alias: windows2019@v1}, {}], tags: {a: .nan}}\n",
		"apiVersion: karpenter.sh/v1\nkind: NodeClaimList\nitems: [{apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: {name: d}, spec: 3}]\n",
		// YAML 1.1 booleans and numbers as values and keys, merged, in a List.
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: karpenter.k8s.aws/v1\n  kind: EC2NodeClass\n  metadata: {name: e, labels: {on: yes, 0777: n}}\n  spec: {detailedMonitoring: Off, tags: {<<: {y: N}, 1.0: x, 123456789012345678901: z}}\n",
		// What v1.0 lacks, in the shapes it may come in.
		"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: f}\nspec: {replicas: 2, disruption: {consolidationPolicy: Balanced, budgets: [{nodes: '1', reasons: [Unhealthy, 3]}, x]}, template: {spec: {requirements: [{key: a, operator: Gte, values: ['1']}, [], null]}}}\n",
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: g}\nspec: {enclaveOptions: {}, amiSelectorTerms: [{alias: windows2025@latest}, {ssmParameter: /a}, 1, {alias: [x]}]}\n",
		"apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: h}\nspec: []\n",
		// A CapacityBuffer (v1.14+, so v1.0 refuses the kind) whose CEL
		// rules meet odd shapes, and a kind of its group that is not Karpenter's.
		"apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata: {name: i, namespace: n}\nspec: {podTemplateRef: {name: ''}, scalableRef: [], replicas: -1, limits: {cpu: x}, percentage: 1.5}\n---\napiVersion: autoscaling.x-k8s.io/v1\nkind: ProvisioningRequest\nmetadata: {name: j}\n",
	} {
		f.Add([]byte(seed))
	}
	engines := []*policies.Engine{engineFor(f, nil), engineJudging(f, "v1.0", nil)}
	crds := linkedCRDs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, engine := range engines {
			_, err := Run(context.Background(), Options{Inputs: []string{"-"}, Stdin: bytes.NewReader(data), Engine: engine, CRDs: crds, KeepStored: true})
			var parseErr *manifest.ParseError
			if err != nil && !errors.As(err, &parseErr) {
				t.Fatalf("judged as %s: %v\ninput:\n%s", engine.Karpenter(), err, data)
			}
		}
	})
}
