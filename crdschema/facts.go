package crdschema

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// Facts reads what the set's CRDs state about the Karpenter release they
// belong to (budget reasons, policies, alias families, kinds...).
func (s *Set) Facts() (release.SchemaFacts, error) {
	crds := make([]map[string]any, 0, len(s.crds))
	for _, crd := range s.crds {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return release.SchemaFacts{}, err
		}
		crds = append(crds, u)
	}
	return release.SchemaFromCRDs(crds)
}

// Judged is the Karpenter version the set's CRDs say objects are judged
// by: the known release they match, with the set's own schema facts. The
// linked set is the linked release, exactly.
func (s *Set) Judged() (release.Judged, error) {
	if s.name == LinkedName {
		r, exact, err := release.Lookup(LinkedRelease)
		if err != nil {
			return release.Judged{}, err
		}
		return release.ForRelease(r, exact, LinkedName), nil
	}
	facts, err := s.Facts()
	if err != nil {
		return release.Judged{}, err
	}
	return release.ForCRDs(facts, s.name), nil
}
