// Package rolloutplan is the controller of karpgate's RolloutPlans: on the
// disruption loop's leader, sharing the loop's cache, it reads each plan,
// the NodePools its waves select and their NodeClaims, Nodes and pods,
// asks progress.Step what comes next, places and lifts the plan's wave
// holds (disruption/guard, Karpenter's own budget {nodes: "0", reasons:
// [Drifted]} with a record naming the plan), writes the plan's status and
// records Events on the plan and on the NodePools it holds or releases.
//
// It requeues a plan exactly when its soak ends or a gate's timeout
// passes, and at once on any change of a plan, NodePool, NodeClaim or
// Node, so that the next wave is released within a reconcile of its soak
// ending. Everything it needs to continue is in the plan's status and the
// NodePools' hold records: a restart, a new leader or a lost replica
// carries on from there.
//
// It never lifts a hold it did not place (a freeze, the rollout guard's,
// another plan's), and it releases its holds on NodePools that left the
// plan: relabelled out of every wave, taken by an older plan, or of a plan
// that was deleted.
//
// Permissions: get, list and watch on rolloutplans, update on
// rolloutplans/status, and what the disruption loop has (patch on
// nodepools, create and patch on events).
package rolloutplan
