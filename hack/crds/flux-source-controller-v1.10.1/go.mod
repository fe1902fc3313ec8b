// Pins Flux's source-controller module whose config/crd/bases/ holds the
// CRD of the GitRepository kind docs/gitops.md creates. Tests read the CRD
// YAML from the module cache; nothing is copied.
module github.com/karpgate/karpgate/hack/crds/flux-source-controller-v1.10.1

go 1.26.0

require github.com/fluxcd/source-controller v1.10.1
