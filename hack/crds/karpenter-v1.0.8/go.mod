// Pins the Karpenter module whose CRDs serve v1beta1 and v1 with a conversion
// webhook. Tests read the CRD YAML from the module cache; nothing is copied.
module github.com/karpgate/karpgate/hack/crds/karpenter-v1.0.8

go 1.26.0

require github.com/aws/karpenter-provider-aws v1.0.8
