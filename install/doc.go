// Package install builds every object a cluster operator applies to run
// karpgate next to Karpenter, from the real API types: k8s.io/api for the
// workload and RBAC, admissionregistration/v1 for the webhooks,
// apiextensions/v1 for the patch that points Karpenter's CRDs' conversion at
// karpgate, and cert-manager's cert-manager.io/v1 for the certificates.
//
// Typed objects mean the compiler checks every field name and the API server
// tests check every value; package install/render turns the same objects into
// the kustomize tree and the Helm chart, so the two cannot disagree. Names
// shared with `karpgate serve` come from package deploy.
//
// The defaults are chosen for a component that Karpenter depends on: two
// replicas spread over zones and hosts, a PodDisruptionBudget, the
// system-cluster-critical priority, and node affinity that keeps karpgate off
// the nodes Karpenter manages, so that it keeps running when Karpenter (or
// karpgate's conversion webhook) is down.
//
// This is the generator behind the checked-in manifests/ folder: `make
// manifests` runs it through `karpgate-dev manifests`, and a test fails when
// the folder is stale. The shipped binary does not link it, nor the
// cert-manager and prometheus-operator API modules it builds with.
package install
