package crdschema

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/karpgate/karpgate/test/benchratio"
)

// BenchmarkCreate judges one object (schema, defaults, pruning, CEL rules)
// against decoding the same object from JSON and nothing else, measured in
// the same run (x-json-decode: how many times longer the verdict takes than
// reading the object). CEL programs are compiled before the timer starts,
// as a lint run compiles them once.
func BenchmarkCreate(b *testing.B) {
	docs := map[string]string{
		"NodePool": nodePool(`  weight: 10
  limits: {cpu: "1000"}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets:
      - {nodes: "10%"}
      - {nodes: "0", schedule: "0 9 * * mon-fri", duration: 8h, reasons: [Drifted]}
`),
		"EC2NodeClass": nodeClass(`  amiSelectorTerms: [{alias: al2023@v20240807}]
  kubelet: {maxPods: 110, imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, evictionHard: {memory.available: 5%}}
  blockDeviceMappings:
    - {deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 100Gi, volumeType: gp3, encrypted: true}}
  tags: {team: web}
`),
	}
	set := linked(b)
	for kind, doc := range docs {
		b.Run(kind, func(b *testing.B) {
			obj := decode(b, doc)
			raw, err := json.Marshal(obj)
			if err != nil {
				b.Fatal(err)
			}
			v, _ := set.Lookup(obj["apiVersion"].(string), kind)
			if _, err := v.compile(); err != nil {
				b.Fatal(err)
			}
			judge := func() {
				verdict, err := v.Create(context.Background(), obj)
				if err != nil || len(verdict.Violations) > 0 {
					b.Fatalf("%v %+v", err, verdict)
				}
			}
			decodeJSON := func() {
				var out map[string]any
				if err := json.Unmarshal(raw, &out); err != nil {
					b.Fatal(err)
				}
			}
			benchratio.Benchmark(b, judge, map[string]func(){"x-json-decode": decodeJSON})
		})
	}
}

// BenchmarkCompile builds the linked CRD set from scratch and compiles the
// three Karpenter kinds: the one-off cost a lint run pays before its first
// object of each kind.
func BenchmarkCompile(b *testing.B) {
	kinds := []struct{ apiVersion, kind string }{
		{"karpenter.sh/v1", "NodePool"},
		{"karpenter.sh/v1", "NodeClaim"},
		{"karpenter.k8s.aws/v1", "EC2NodeClass"},
	}
	b.ReportAllocs()
	for b.Loop() {
		set, err := Linked()
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range kinds {
			v, _ := set.Lookup(k.apiVersion, k.kind)
			if _, err := v.compile(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
