// Pins the Karpenter core module whose kwok provider `make run` and the
// Karpenter e2e tests run by default (hack/harness builds it at the same
// version): its KWOKNodeClass CRD is read from the module cache; nothing
// is copied.
module github.com/karpgate/karpgate/hack/crds/karpenter-kwok-v1.15.0

go 1.26.0

require sigs.k8s.io/karpenter v1.15.0
