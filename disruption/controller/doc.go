// Package controller runs the disruption loop inside a controller-runtime
// manager: Setup adds a cache of its own (trimmed NodePools, NodeClaims,
// EC2NodeClasses and Nodes, started on every replica so that /status answers
// everywhere) and a leader-elected controller that, per NodePool, computes
// the status, exports it as metrics, emits Events when something changed,
// runs the rollout guard when enabled, and requeues at the next budget
// window boundary instead of polling.
//
// The loop keeps its own scheme and cache rather than the manager's: the
// minimal views of Karpenter's kinds must not meet other Go types for the
// same kinds, and the trims must apply whatever options the manager's cache
// was built with.
//
// Pods are the bulk of a large cluster's objects: the cache holds a view of
// each (see state.Pod, about a kilobyte with its index entries) and looks
// at a node's pods only when they can stop a disruption: on drifted nodes
// for status, on the one node /explain is asked about.
//
// Permissions the loop needs: get, list and watch on nodepools and nodeclaims
// (karpenter.sh), ec2nodeclasses (karpenter.k8s.aws), nodes, pods and
// poddisruptionbudgets (policy); patch on nodepools, only for the rollout
// guard and its cluster-wide freeze; create and patch on events
// (events.k8s.io); and the manager's leases for leader election.
package controller
