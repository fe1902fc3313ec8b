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
// Permissions the loop needs: get, list and watch on nodepools and nodeclaims
// (karpenter.sh), ec2nodeclasses (karpenter.k8s.aws) and nodes; patch on
// nodepools, only for the rollout guard; create and patch on events
// (events.k8s.io); and the manager's leases for leader election.
package controller
