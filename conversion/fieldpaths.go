package conversion

import (
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// fieldMove is one v1 field whose v1beta1 source sits elsewhere.
type fieldMove struct {
	kind, v1, v1beta1 string
	// when, if set, limits the move to v1beta1 objects it holds for.
	when func(v1beta1 map[string]any) bool
	// whole: everything under the v1 field came from the one v1beta1 field.
	whole bool
}

var fieldMoves = []fieldMove{
	{kind: karpenter.KindNodePool, v1: templateSpecPath + ".expireAfter", v1beta1: disruptionPath + ".expireAfter"},
	{kind: karpenter.KindNodePool, v1: templateSpecPath + ".nodeClassRef.group", v1beta1: templateSpecPath + ".nodeClassRef.apiVersion"},
	{kind: karpenter.KindNodePool, v1: annotationPath(karpenter.KubeletCompatibilityAnnotation), v1beta1: templateSpecPath + ".kubelet"},
	{kind: karpenter.KindNodeClaim, v1: "spec.nodeClassRef.group", v1beta1: "spec.nodeClassRef.apiVersion"},
	{kind: karpenter.KindNodeClaim, v1: annotationPath(karpenter.KubeletCompatibilityAnnotation), v1beta1: "spec.kubelet"},
	// Without selector terms, v1's alias term is made from amiFamily.
	{kind: karpenter.KindEC2NodeClass, v1: "spec.amiSelectorTerms", v1beta1: "spec.amiFamily", whole: true, when: func(obj map[string]any) bool {
		spec, _ := obj["spec"].(map[string]any)
		terms, _ := spec["amiSelectorTerms"].([]any)
		return len(terms) == 0
	}},
}

// V1Beta1Path names, for a field path of the v1 conversion of the v1beta1
// object obj, the v1beta1 field it came from: spec.template.spec.expireAfter
// of a NodePool came from spec.disruption.expireAfter, for example. A field
// that did not move keeps its path. It lets checks made on the v1 form point
// at what the author wrote.
func V1Beta1Path(obj map[string]any, v1Path string) string {
	kind, _ := obj["kind"].(string)
	for _, m := range fieldMoves {
		if m.kind != kind || (m.when != nil && !m.when(obj)) {
			continue
		}
		if rest, ok := strings.CutPrefix(v1Path, m.v1); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			if m.whole {
				return m.v1beta1
			}
			return m.v1beta1 + rest
		}
	}
	return v1Path
}
