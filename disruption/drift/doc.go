// Package drift reads how far a drift rollout has got: which NodeClaims
// Karpenter has marked Drifted, by reason and since when, and which ones it
// will mark AMIDrift the next time it looks, because their image is no longer
// the newest AMI in their EC2NodeClass's status.amis that is compatible with
// their instance type.
//
// The compatibility rule follows Karpenter's AWS provider: status.amis is
// ordered newest (and non-deprecated) first; for an instance type, the AMI
// Karpenter launches is the first whose requirements the instance type
// satisfies, and an instance drifts when its image is not that AMI (or when
// no AMI is compatible at all). Karpenter checks the requirements against the
// instance type's own requirements; every single-valued one of those is
// written onto the NodeClaim as a label (kubernetes.io/arch,
// karpenter.k8s.aws/instance-gpu-count, ...) and a multi-valued or
// "does not exist" one is not, so karpgate checks each AMI requirement
// against the NodeClaim's labels: In needs the label with one of the values,
// NotIn needs it absent or with another value, Exists needs it, DoesNotExist
// needs it absent, Gt and Lt compare integers. A requirement on a key outside
// karpenter.AMIRequirementLabels (none of Karpenter's AMI families writes
// one) leaves the NodeClaim undecided rather than guessed.
package drift
