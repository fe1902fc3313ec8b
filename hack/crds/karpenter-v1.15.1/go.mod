// Pins the Karpenter module whose CRDs serve only v1 (today's
// release). Tests read the CRD YAML from the module cache; nothing is copied.
module github.com/karpgate/karpgate/hack/crds/karpenter-v1.15.1

go 1.26.0

require github.com/aws/karpenter-provider-aws v1.15.1
