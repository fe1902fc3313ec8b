package crdschema

import (
	"slices"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
)

// LinkedModule is the Karpenter module whose CRDs the binary links. Its
// pkg/apis embeds EC2NodeClass and, from sigs.k8s.io/karpenter, NodePool,
// NodeClaim and NodeOverlay.
const LinkedModule = "github.com/aws/karpenter-provider-aws"

// LinkedRelease is the version of LinkedModule that go.mod requires.
// TestLinkedReleaseMatchesGoMod keeps the two equal; the build information
// would say the same in a release binary, but test binaries carry none.
const LinkedRelease = "v1.15.1"

// LinkedName names the linked set for people.
const LinkedName = "Karpenter " + LinkedRelease + " (linked)"

// Linked returns the CRDs of the Karpenter release linked into the binary,
// the default set of `karpgate lint`: those its karpenter-crd Helm chart
// installs (TestLinkedSetIsTheReleasesCRDs).
func Linked() (*Set, error) {
	return New(LinkedName, linkedCRDs())
}

// linkedCRDs are LinkedModule's embedded CRDs and those of the core module
// it requires that it lacks: the chart installs CapacityBuffer (v1.14+),
// which only sigs.k8s.io/karpenter/pkg/apis embeds.
func linkedCRDs() []*apiextensionsv1.CustomResourceDefinition {
	crds := slices.Clone(awsapis.CRDs)
	for _, crd := range coreapis.CRDs {
		if !slices.ContainsFunc(crds, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == crd.Name }) {
			crds = append(crds, crd)
		}
	}
	return crds
}
