package karpenter

// Labels and annotations Karpenter itself reads or writes.
const (
	// NodePoolLabel on a NodeClaim or Node names the NodePool that owns it.
	NodePoolLabel = "karpenter.sh/nodepool"
	// DoNotDisruptAnnotation on a pod or node blocks voluntary disruption.
	DoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt"
	// Removed in v1; replaced by karpenter.sh/do-not-disrupt.
	LegacyDoNotEvictAnnotation       = "karpenter.sh/do-not-evict"
	LegacyDoNotConsolidateAnnotation = "karpenter.sh/do-not-consolidate"

	NodePoolHashAnnotation            = "karpenter.sh/nodepool-hash"
	NodePoolHashVersionAnnotation     = "karpenter.sh/nodepool-hash-version"
	EC2NodeClassHashAnnotation        = "karpenter.k8s.aws/ec2nodeclass-hash"
	EC2NodeClassHashVersionAnnotation = "karpenter.k8s.aws/ec2nodeclass-hash-version"
	StoredVersionMigratedAnnotation   = "karpenter.sh/stored-version-migrated"
)

// Finalizers Karpenter puts on the objects it cleans up after.
const (
	// TerminationFinalizer is on NodeClaims and Nodes.
	TerminationFinalizer = "karpenter.sh/termination"
	// EC2NodeClassTerminationFinalizer is on EC2NodeClasses.
	EC2NodeClassTerminationFinalizer = "karpenter.k8s.aws/termination"
)

// OwnAnnotations are the annotations Karpenter writes on NodePools and
// EC2NodeClasses in the course of its work (the drift hashes): no rule of
// karpgate's reads them, so a write that changes only these need not wait
// for karpgate (see internal/webhookconfig).
var OwnAnnotations = []string{
	NodePoolHashAnnotation, NodePoolHashVersionAnnotation,
	EC2NodeClassHashAnnotation, EC2NodeClassHashVersionAnnotation,
}

// OwnFinalizers are the finalizers Karpenter adds to NodePools and
// EC2NodeClasses.
var OwnFinalizers = []string{TerminationFinalizer, EC2NodeClassTerminationFinalizer}

// Compatibility annotations written by Karpenter v1.0's conversion webhook.
// karpgate writes and honours them with the same payload shapes so that
// Karpenter reads karpgate's output as its own.
const (
	// JSON of the v1beta1 kubelet block; while present Karpenter v1.0 uses it
	// instead of EC2NodeClass.spec.kubelet.
	KubeletCompatibilityAnnotation = "compatibility.karpenter.sh/v1beta1-kubelet-conversion"
	// JSON of the original v1beta1 nodeClassRef ("null" when absent).
	NodeClassReferenceCompatibilityAnnotation = "compatibility.karpenter.sh/v1beta1-nodeclass-reference"
	// Which Ubuntu compatibility steps were applied to an EC2NodeClass.
	UbuntuCompatibilityAnnotation = "compatibility.karpenter.k8s.aws/v1beta1-ubuntu"
	// The pinned alias version kept while an EC2NodeClass is read as v1beta1.
	AliasVersionCompatibilityAnnotation = "compatibility.karpenter.k8s.aws/v1-alias-version"
)

// Disruption reasons a v1 budget can name. Unhealthy (node repair paced by
// budgets) came with Karpenter v1.15.
const (
	ReasonUnderutilized = "Underutilized"
	ReasonEmpty         = "Empty"
	ReasonDrifted       = "Drifted"
	ReasonUnhealthy     = "Unhealthy"
)

// DisruptionReasons lists the budget reasons of Karpenter v1.0, the release
// whose v1beta1 <-> v1 conversion karpgate serves, in Karpenter's order.
var DisruptionReasons = []string{ReasonUnderutilized, ReasonEmpty, ReasonDrifted}

// Labels Karpenter's Helm chart puts on what it installs (the common Helm
// labels): preflight finds the controller by the first and reads the
// release from the second.
const (
	ChartNameLabel    = "app.kubernetes.io/name"
	ChartName         = "karpenter"
	ChartVersionLabel = "app.kubernetes.io/version"
)
