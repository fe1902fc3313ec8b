// Pins the Argo CD module whose manifests/crds/ holds the CRD of the
// Application kind docs/gitops.md creates. Tests read the CRD YAML from the
// module cache; nothing is copied.
module github.com/karpgate/karpgate/hack/crds/argo-cd-v3.6.1

go 1.26.0

require github.com/argoproj/argo-cd/v3 v3.6.1
