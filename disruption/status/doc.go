// Package status computes, per NodePool and at a given instant, what
// Karpenter's disruption controller sees: the nodes that count towards the
// budgets and those already disrupting, each budget and whether it is active,
// the disruptions each reason allows now and when that next changes, the
// budgets that block every reason, the drift rollout's progress, and the
// rollout guard's hold. It is a pure function of a state.Pool and a clock
// reading, shared by the loop, its /status endpoint and `karpgate status`,
// and it renders the result as JSON or as a table.
//
// Counting follows Karpenter: a node counts when it has a NodeClaim (paired
// by provider ID), carries karpenter.sh/initialized=true (or node repair is
// rebooting it) and its NodeClaim's instance is not terminating; it is
// disrupting when its NodeClaim is being deleted, it carries the
// karpenter.sh/disrupted taint, which Karpenter adds at the moment it marks a
// node for disruption (its in-memory mark is not visible from outside), its
// NodeClaim is Rebooting, or its Ready condition is not True. Karpenter v1.15
// counts a node that is only not Ready against every reason but Unhealthy:
// node repair acts on NotReady nodes, so they must not use up its budget.
//
// The reasons are those of the Karpenter release judged (Unhealthy from
// v1.15 on); the caller passes them.
package status
