package installed

import (
	"errors"
	"fmt"
	"slices"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// ErrNoCRDs is Judge's answer when none of the CRDs given is one of Karpenter's.
var ErrNoCRDs = errors.New("no Karpenter CRDs are installed (" + fmt.Sprint(CRDNames()) + ")")

// CRDNames are the names of the CRDs of Karpenter's groups that any
// release karpgate knows has (NodePool, NodeClaim, EC2NodeClass, and
// NodeOverlay from the releases that have it), sorted. All of them take
// part: a cluster whose karpenter.sh group lacks a kind its release has
// matches that release only approximately, as lint --crds-from-cluster
// says too.
func CRDNames() []string {
	var names []string
	for _, r := range release.Known() {
		for _, k := range r.Facts.Schema.Kinds {
			if k.Group != karpenter.CoreGroup && k.Group != karpenter.AWSGroup {
				continue
			}
			if name := k.Plural + "." + k.Group; !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Judge is the release the Karpenter CRDs among crds (CustomResourceDefinition
// objects, as unstructured maps) belong to, with their own schema facts;
// source names where they were read. Other CRDs are ignored, and the order
// of crds does not matter: the same CRDs always give the same judgement, so
// that a watch can compare one with the next.
func Judge(crds []map[string]any, source string) (release.Judged, error) {
	names := CRDNames()
	var ours []map[string]any
	for _, crd := range crds {
		if slices.Contains(names, nameOf(crd)) {
			ours = append(ours, crd)
		}
	}
	if len(ours) == 0 {
		return release.Judged{}, ErrNoCRDs
	}
	slices.SortFunc(ours, func(a, b map[string]any) int {
		return slices.Index(names, nameOf(a)) - slices.Index(names, nameOf(b))
	})
	facts, err := release.SchemaFromCRDs(ours)
	if err != nil {
		return release.Judged{}, fmt.Errorf("reading the Karpenter CRDs of %s: %w", source, err)
	}
	return release.ForCRDs(facts, source), nil
}

func nameOf(crd map[string]any) string {
	meta, _ := crd["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}
