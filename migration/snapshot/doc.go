// Package snapshot reads what `karpgate preflight` and its kubelet fix look
// at before a Karpenter upgrade, from a live cluster or from manifest files,
// into one shape: Karpenter's CRDs, its NodePools, NodeClaims and
// EC2NodeClasses, admission webhook configurations, and the Services that
// CRD conversion stanzas and webhooks call.
//
// In a cluster every list is paginated and Karpenter objects are read at v1
// when the CRD serves it (what Karpenter v1.1 and later will see), else at
// v1beta1. A kind that cannot be read (a failing conversion webhook, missing
// RBAC) is recorded, not fatal: that is itself something to report.
package snapshot
