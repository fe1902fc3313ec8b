package karpenter

// Default nodeClassRef target on AWS: Karpenter v1 fills a v1beta1 reference's
// missing apiVersion and kind with these.
const (
	DefaultNodeClassGroup = AWSGroup
	DefaultNodeClassKind  = KindEC2NodeClass
)

// Consolidation policies. v1 renamed WhenUnderutilized.
const (
	ConsolidationWhenEmpty                = "WhenEmpty"
	ConsolidationWhenUnderutilized        = "WhenUnderutilized"        // v1beta1 only
	ConsolidationWhenEmptyOrUnderutilized = "WhenEmptyOrUnderutilized" // v1 only
	// ConsolidationBalanced (Karpenter v1.14) consolidates a node only
	// when the cost it saves outweighs the disruption it causes.
	ConsolidationBalanced = "Balanced"
)

// Never disables a NillableDuration such as expireAfter or consolidateAfter.
const Never = "Never"

// EC2NodeClass AMI families. Ubuntu exists in v1beta1 only.
const (
	AMIFamilyAL2          = "AL2"
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyUbuntu       = "Ubuntu"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyCustom       = "Custom"
)

// AliasFamilies are the families a v1 amiSelectorTerms alias can name, in
// Karpenter's order; the alias spells them in lower case (`al2023@latest`).
var AliasFamilies = []string{AMIFamilyAL2, AMIFamilyAL2023, AMIFamilyBottlerocket, AMIFamilyWindows2019, AMIFamilyWindows2022}

// AliasVersionLatest is the alias version that follows every new AMI release.
const AliasVersionLatest = "latest"

// Values of the compatibility.karpenter.k8s.aws/v1beta1-ubuntu annotation,
// joined with commas: which Ubuntu compatibility steps were applied.
const (
	UbuntuCompatibilityAMIFamily           = "amiFamily"
	UbuntuCompatibilityBlockDeviceMappings = "blockDeviceMappings"
	UbuntuCompatibilityIncompatible        = "incompatible"
)

// UbuntuPlaceholderAMIID is the amiSelectorTerms id Karpenter v1 injects for
// an Ubuntu EC2NodeClass without terms, only to pass v1 validation.
const UbuntuPlaceholderAMIID = "ami-placeholder"
