// Package eviction decides, with Karpenter's rules, which pods on a node stop
// Karpenter from disrupting it voluntarily, and which pods would have to be
// rescheduled if it did.
//
// The rules, as Karpenter's disruption controller applies them to each
// candidate node (sigs.k8s.io/karpenter, pkg/controllers/state and
// pkg/utils/pdb, v1.0 to v1.14):
//   - an active pod (not Succeeded or Failed, not terminating) annotated
//     karpenter.sh/do-not-disrupt: "true" blocks, whoever owns it: DaemonSet
//     and mirror pods included. Karpenter v1.12 and later also read a
//     positive duration ("2h"), which blocks until that long after the pod
//     started; earlier releases and any other value do not block;
//   - otherwise, for every pod Karpenter would evict (active, not a mirror
//     pod, not tolerating the karpenter.sh/disrupted NoSchedule taint), a
//     PodDisruptionBudget of its namespace selecting it that allows zero
//     disruptions blocks, unless its unhealthyPodEvictionPolicy is
//     AlwaysAllow and the pod is not Ready; two budgets selecting one pod
//     block too, as the eviction API refuses such a pod.
//
// Karpenter stops at the first blocker; this package names them all. A
// NodeClaim with a terminationGracePeriod is still a drift candidate despite
// such pods: its drain is bounded by that period instead. Callers apply that
// exception, since it depends on the reason.
package eviction
