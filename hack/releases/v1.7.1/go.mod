// Pins the modules whose CRDs and Go source the facts of Karpenter v1.7.1 are
// read from (make release-facts). Nothing here is built or imported.
module github.com/karpgate/karpgate/hack/releases/v1.7.1

go 1.26.0

require (
	sigs.k8s.io/karpenter v1.7.1
)
