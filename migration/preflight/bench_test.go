package preflight

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/migration/snapshot"
	"github.com/karpgate/karpgate/test/benchratio"
)

// largeCluster is a dump of a big cluster before the upgrade: 50
// EC2NodeClasses, 500 NodePools (half with the kubelet annotation, some
// disagreeing), 5000 NodeClaims with v1beta1 managedFields.
func largeCluster() []byte {
	var b strings.Builder
	for c := range 50 {
		fmt.Fprintf(&b, "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: class-%d}\nspec: {role: r, amiSelectorTerms: [{alias: al2023@v20240807}]}\n", c)
	}
	for p := range 500 {
		annotations := "{}"
		if p%2 == 0 {
			annotations = fmt.Sprintf(`{compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"maxPods":%d}', compatibility.karpenter.sh/v1beta1-nodeclass-reference: '{"name":"class-%d"}'}`, 100+p%3, p%50)
		}
		fmt.Fprintf(&b, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: pool-%d, annotations: %s}\nspec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: class-%d}, requirements: []}}}\n", p, annotations, p%50)
	}
	for n := range 5000 {
		fmt.Fprintf(&b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: claim-%d, labels: {karpenter.sh/nodepool: pool-%d}, managedFields: [{apiVersion: karpenter.sh/v1beta1, manager: karpenter, operation: Update}, {apiVersion: karpenter.sh/v1, manager: karpenter, operation: Update}]}\nspec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: class-%d}, requirements: []}\n", n, n%500, n%50)
	}
	return []byte(b.String())
}

// BenchmarkPreflight checks a 5550-object dump for v1.1, against reading it
// (x-read: the YAML parse preflight --from-files does first).
func BenchmarkPreflight(b *testing.B) {
	data := largeCluster()
	read := func() *snapshot.Snapshot {
		s, err := snapshot.FromFiles([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	s := read()
	target, err := ParseTarget("v1.1.0")
	if err != nil {
		b.Fatal(err)
	}
	running, err := DetectRunning(s, "")
	if err != nil {
		b.Fatal(err)
	}
	if r := Run(s, running, target); len(r.Find("PF102")) == 0 || len(r.Find("PF108")) == 0 {
		b.Fatalf("the dump does not exercise the checks: %+v", r.Summary)
	}
	benchratio.Benchmark(b, func() { Run(s, running, target) }, map[string]func(){
		"x-read": func() { read() },
	})
}
