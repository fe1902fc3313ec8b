// Package kubeletfix moves the kubelet settings Karpenter v1.0 keeps in
// NodePools' compatibility.karpenter.sh/v1beta1-kubelet-conversion
// annotation into EC2NodeClasses on a live cluster, before an upgrade to
// Karpenter v1.1, whose controller refuses to start while any NodePool
// carries that annotation.
//
// Where each block goes is conversion/kubeletplan's decision, the same one
// `karpgate convert` makes for files: NodePools that agree share their
// EC2NodeClass, and a group that disagrees gets a copy of it. PlanFor reads
// the plan off a snapshot (preflight reports it); Apply carries it out in
// an order that changes no node's kubelet on the way: an EC2NodeClass takes
// its new kubelet before any annotation is removed, a copy exists before a
// NodePool points at it, and a NodePool's annotation goes only while it
// still holds the block the plan was made for. Every step says which nodes
// it makes drift.
package kubeletfix
