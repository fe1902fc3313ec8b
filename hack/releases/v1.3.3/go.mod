// Pins the modules whose CRDs and Go source the facts of Karpenter v1.3.3 are
// read from (make release-facts). Nothing here is built or imported.
module github.com/karpgate/karpgate/hack/releases/v1.3.3

go 1.26.0

require (
	github.com/aws/karpenter-provider-aws v1.3.3
	sigs.k8s.io/karpenter v1.3.3
)
