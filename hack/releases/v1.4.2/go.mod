// Pins the modules whose CRDs and Go source the facts of Karpenter v1.4.2 are
// read from (make release-facts). Nothing here is built or imported.
module github.com/karpgate/karpgate/hack/releases/v1.4.2

go 1.26.0

require (
	sigs.k8s.io/karpenter v1.4.2
)
