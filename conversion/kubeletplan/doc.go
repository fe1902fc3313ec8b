// Package kubeletplan decides where the kubelet blocks of v1beta1 NodePools
// go in v1, where kubelet settings live on the EC2NodeClass.
//
// It is pure: NodePools (with the block they carry, from spec.kubelet or
// Karpenter's compatibility annotation) and EC2NodeClasses in, a Plan out.
// `karpgate convert` applies the plan to files; `karpgate preflight`
// reports it for a live cluster and `--fix-kubelet` applies it there. One
// plan for both, so that the cluster and Git end up the same.
//
// The rule: the NodePools of one EC2NodeClass are grouped by the kubelet they
// run with (their own block, or the EC2NodeClass's when they have none). The
// group that already runs with the EC2NodeClass's kubelet keeps the
// EC2NodeClass unchanged, so none of its nodes drift; without such a group,
// the group of the alphabetically first NodePool keeps it and the
// EC2NodeClass takes that group's block. Every other group gets a copy of the
// EC2NodeClass named <EC2NodeClass>-<first NodePool> holding its block, and
// its NodePools are repointed there, which replaces their nodes.
package kubeletplan
