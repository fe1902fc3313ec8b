// Package policywatch keeps `karpgate serve`'s policy engine in step with
// its mounted files: karpgate.yaml and the --policy and --data folders. It
// polls their content (which also sees the symlink swap a ConfigMap volume
// makes on update), compiles a new engine when anything changed, and swaps
// it in atomically, so requests in flight finish on the engine they
// started with and none is dropped. A new configuration or policy that
// does not compile is logged and counted (karpgate_config_reload_total
// {result="failure"}), and the last good engine stays. Every engine judges
// by the Karpenter release Judged picks (karpgate.yaml's karpenterVersion,
// else the cluster's CRDs, Options.Cluster); Rejudge recompiles when the
// cluster's CRDs change what that release is.
package policywatch
