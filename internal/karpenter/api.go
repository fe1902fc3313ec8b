package karpenter

import "k8s.io/apimachinery/pkg/runtime/schema"

// API groups.
const (
	CoreGroup = "karpenter.sh"      // NodePool, NodeClaim
	AWSGroup  = "karpenter.k8s.aws" // EC2NodeClass
	// AutoscalingGroup is SIG Autoscaling's group, in which Karpenter
	// v1.14+ serves CapacityBuffer. Cluster Autoscaler serves kinds of its
	// own in it (ProvisioningRequest), so Karpenter's CRDs speak only for
	// the kinds they have: see SharedGroup.
	AutoscalingGroup = "autoscaling.x-k8s.io"
)

// API versions. v1 is the hub that conversion goes through.
const (
	V1Beta1  = "v1beta1"
	V1       = "v1"
	V1Alpha1 = "v1alpha1" // NodeOverlay's only version so far
)

// Kinds.
const (
	KindNodePool     = "NodePool"
	KindNodeClaim    = "NodeClaim"
	KindEC2NodeClass = "EC2NodeClass"
	// KindNodeOverlay is Karpenter's NodeOverlay (v1.7+), a rule-only kind
	// (RuleOnlyKinds).
	KindNodeOverlay = "NodeOverlay"
	// KindCapacityBuffer is Karpenter's CapacityBuffer (AutoscalingGroup):
	// karpgate neither converts it nor has rules about it; lint judges it
	// by its CRD only.
	KindCapacityBuffer = "CapacityBuffer"
)

// SharedGroup reports whether Karpenter shares group with other projects:
// a kind of it that Karpenter's CRDs lack may be another project's, not
// one the API server refuses.
func SharedGroup(group string) bool { return group == AutoscalingGroup }

// Kind describes one Karpenter kind and the versions karpgate reads and writes.
type Kind struct {
	Group    string
	Kind     string
	Resource string
	Versions []string
}

// Kinds lists every kind karpgate understands, in a stable order.
var Kinds = []Kind{
	{Group: CoreGroup, Kind: KindNodePool, Resource: "nodepools", Versions: []string{V1Beta1, V1}},
	{Group: CoreGroup, Kind: KindNodeClaim, Resource: "nodeclaims", Versions: []string{V1Beta1, V1}},
	{Group: AWSGroup, Kind: KindEC2NodeClass, Resource: "ec2nodeclasses", Versions: []string{V1Beta1, V1}},
}

// RuleOnlyKinds are the Karpenter kinds karpgate neither converts nor
// audits and that no built-in rule is about, but whose writes the
// admission webhooks still hand to the engine: the rules for every kind
// (custom.kinds "*"), users' own among them, judge them at admission as
// lint judges them in CI. NodeOverlay is Karpenter v1.7's; karpgate
// follows its CRD's versions rather than naming them.
var RuleOnlyKinds = []Kind{
	{Group: CoreGroup, Kind: KindNodeOverlay, Resource: "nodeoverlays", Versions: []string{V1Alpha1}},
}

// LookupRuleOnlyKind finds the rule-only kind (RuleOnlyKinds) of an
// apiVersion and kind pair, at any version of its group: the webhooks
// match them at every version, since karpgate reads nothing of their
// schema.
func LookupRuleOnlyKind(apiVersion, kind string) (Kind, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return Kind{}, false
	}
	for _, k := range RuleOnlyKinds {
		if k.Group == gv.Group && k.Kind == kind {
			return k, true
		}
	}
	return Kind{}, false
}

// GroupVersionKind returns the GVK of kind k at version v.
func (k Kind) GroupVersionKind(version string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: version, Kind: k.Kind}
}

// GroupVersionResource returns the GVR of kind k at version v.
func (k Kind) GroupVersionResource(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: version, Resource: k.Resource}
}

// LookupKind finds the Karpenter kind for an apiVersion ("group/version") and
// kind pair. ok is false for anything that is not a Karpenter kind at a
// version karpgate understands.
func LookupKind(apiVersion, kind string) (k Kind, version string, ok bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return Kind{}, "", false
	}
	for _, candidate := range Kinds {
		if candidate.Group != gv.Group || candidate.Kind != kind {
			continue
		}
		for _, v := range candidate.Versions {
			if v == gv.Version {
				return candidate, v, true
			}
		}
	}
	return Kind{}, "", false
}

// CRDName is the name of the kind's CustomResourceDefinition, like
// nodepools.karpenter.sh.
func (k Kind) CRDName() string { return k.Resource + "." + k.Group }

// KindByCRDName finds the kind whose CRD is named name.
func KindByCRDName(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.CRDName() == name {
			return k, true
		}
	}
	return Kind{}, false
}

// KindOf finds a kind by its name, such as "NodePool".
func KindOf(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Kind == name {
			return k, true
		}
	}
	return Kind{}, false
}
