// Pins the Karpenter core module whose kwok provider `make run
// KARPENTER_VERSION=v1.0.8` and the Karpenter e2e tests on v1.0.8 run
// (hack/karpenter-v1.0.8 builds it at the same version): its KWOKNodeClass
// CRD is read from the module cache; nothing is copied.
module github.com/karpgate/karpgate/hack/crds/karpenter-kwok-v1.0.8

go 1.26.0

require sigs.k8s.io/karpenter v1.0.8
