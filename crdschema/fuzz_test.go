package crdschema

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/manifest"
)

// FuzzCreate feeds arbitrary manifests through the API server's checks: no
// input may panic (Create turns a panic into an error, so any error fails)
// and every violation must name a class.
func FuzzCreate(f *testing.F) {
	for _, seed := range []string{
		nodePool(""),
		nodePool("  weight: \"10\"\n  disruption: {consolidationPolicy: whenEmpty, consolidateAfer: 1m, budgets: {nodes: 1}}\n"),
		nodeClass("  amiSelectorTerms: [{alias: windows2022@v1}, {id: ami-1}]\n  kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 80, maxPods: .inf}\n"),
		strings.Replace(nodePool("status: {nodes: x}\n"), "metadata: {name: general}", "metadata: {name: A_B, labels: [x], annotations: {a: 1}, finalizers: {}}", 1),
		`{apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: null, spec: {nodeClassRef: null, requirements: [{key: 1, operator: Gt, values: [-1]}]}}`,
		"apiVersion: karpenter.sh/v1\nkind: NodePool\nspec: []\n",
		capacityBuffer("  replicas: -1\n  scalableRef: {kind: '', name: 3}\n  limits: {cpu: lots, memory: [1]}\n  percentage: 1.5\n"),
		"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec:\n  template: {spec: {requirements: [{key: k, operator: In, values: [a, a, a]}], taints: [{key: a, effect: NoSchedule}, {key: a, effect: NoSchedule}]}}\n",
	} {
		f.Add([]byte(seed))
	}
	set := linked(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = manifest.ParseStream("fuzz.yaml", bytes.NewReader(data), func(d *manifest.Document) error {
			for _, o := range d.Objects {
				v, ok := set.Lookup(o.APIVersion(), o.Kind())
				if !ok {
					continue
				}
				verdict, err := v.Create(context.Background(), o.Content)
				if err != nil {
					t.Fatalf("%v\ninput:\n%s", err, data)
				}
				for _, violation := range verdict.Violations {
					if violation.Class == "" || violation.Message == "" {
						t.Fatalf("violation without class or message: %+v", violation)
					}
				}
			}
			return nil
		})
	})
}

// FuzzParseCRDs: a --crds file of any content is read or refused with an
// error, never a panic, and whatever it yields loads or is refused.
func FuzzParseCRDs(f *testing.F) {
	f.Add([]byte(smallCRD))
	f.Add([]byte(strings.Replace(smallCRD, "type: integer", "type: [integer]", 1)))
	f.Add([]byte(smallCRD + "  {{- if .Values.x }}\n"))
	f.Add([]byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinitionList\nitems: [{kind: CustomResourceDefinition, apiVersion: apiextensions.k8s.io/v1, spec: {group: g, names: {kind: K}, versions: [{name: v1, served: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-validations: [{rule: 'self.x >'}]}}}]}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		crds, err := ParseCRDs("fuzz.yaml", data)
		if err != nil {
			return
		}
		set, err := New("fuzz", crds)
		if err != nil {
			return
		}
		for _, crd := range crds {
			for _, version := range set.Served(crd.Spec.Group, crd.Spec.Names.Kind) {
				v, _ := set.Lookup(crd.Spec.Group+"/"+version, crd.Spec.Names.Kind)
				_, err := v.Create(context.Background(), map[string]any{"apiVersion": crd.Spec.Group + "/" + version, "kind": crd.Spec.Names.Kind, "metadata": map[string]any{"name": "x"}, "spec": map[string]any{"a": int64(1)}})
				if errors.Is(err, ErrInternal) {
					t.Fatalf("%v\ninput:\n%s", err, data)
				}
			}
		}
	})
}
