package crdschema

import (
	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
)

// LinkedModule is the Karpenter module whose CRDs the binary links. Its
// pkg/apis embeds the CRDs Karpenter's Helm charts install: NodePool and
// NodeClaim (from sigs.k8s.io/karpenter), EC2NodeClass and NodeOverlay.
const LinkedModule = "github.com/aws/karpenter-provider-aws"

// LinkedRelease is the version of LinkedModule that go.mod requires.
// TestLinkedReleaseMatchesGoMod keeps the two equal; the build information
// would say the same in a release binary, but test binaries carry none.
const LinkedRelease = "v1.15.1"

// LinkedName names the linked set for people.
const LinkedName = "Karpenter " + LinkedRelease + " (linked)"

// Linked returns the CRDs of the Karpenter release linked into the binary,
// the default set of `karpgate lint`.
func Linked() (*Set, error) {
	return New(LinkedName, awsapis.CRDs)
}
