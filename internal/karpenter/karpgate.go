package karpenter

// karpgate's own label and annotation keys, kept beside Karpenter's so that
// every package spells them the same way.
const (
	// EnvironmentLabel on an object names its environment; by default the
	// values "prod" and "production" mark it as production.
	EnvironmentLabel = "karpgate.io/environment"
	// EnvironmentTag is the EC2NodeClass spec.tags key read the same way.
	EnvironmentTag = "environment"
	// WaiverAnnotationPrefix followed by a rule ID waives that rule on the
	// object; the annotation's value is the reason, which must not be empty.
	WaiverAnnotationPrefix = "karpgate.io/waive-"
)
