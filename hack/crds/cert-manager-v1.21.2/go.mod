// Pins the cert-manager module whose deploy/crds/ holds the CRDs of the
// Issuer and Certificate kinds the install manifests create. Tests read the
// CRD YAML from the module cache; nothing is copied.
module github.com/karpgate/karpgate/hack/crds/cert-manager-v1.21.2

go 1.26.0

require github.com/cert-manager/cert-manager v1.21.2
