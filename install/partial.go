package install

import "k8s.io/apimachinery/pkg/runtime"

// Partial is a patch: the typed Object carries only the fields listed in
// Fields (paths from the root). The rest of a typed object's zero values,
// such as a CRD's empty spec.group, would overwrite the real object's fields,
// so writers keep only the listed paths.
//
// A Partial of an object karpgate does not own (Karpenter's CRDs) is meant
// for server-side apply, which moves only the listed fields to karpgate's
// field manager.
type Partial struct {
	Object runtime.Object
	Fields [][]string
}

// partialIdentity are the fields every patch needs to name its target and
// carry annotations.
func partialIdentity() [][]string {
	return [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}, {"metadata", "annotations"}}
}
