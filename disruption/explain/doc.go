// Package explain answers "why is this node not being disrupted?" for one
// NodeClaim or Node: for each voluntary disruption reason of the Karpenter
// release judged (Underutilized, Empty, Drifted, and Unhealthy, node
// repair, from v1.15), whether Karpenter may pick the node now, and
// everything that stops it: the node not yet initialized, already being
// deleted, disrupted or rebooted, karpenter.sh/do-not-disrupt on the node or
// on one of its pods, PodDisruptionBudgets that allow no disruption, the
// drift state, the consolidation settings (Balanced included), a static
// NodePool's replicas and limits.nodes, node repair's own rules
// (karpenter.sh/do-not-repair, a Ready condition that is not True, the
// breaker that stops repair when more than a fifth of the nodes fail), and
// the budget that binds now with when it next allows one (and whether it is
// karpgate's own hold or freeze). It also says when expiry (forceful, past
// every budget) comes and what terminationGracePeriod does to a blocked
// drain.
//
// Gather reads what an explanation needs through any client.Reader: the API
// server for `karpgate explain`, the disruption loop's cache for /explain.
// Explain is a pure function of that input and an instant. The budget maths
// comes from package budget, the counting from package status and the pod
// rules from package eviction, so an explanation never disagrees with
// `karpgate status`. Text and JSON renderers live in their own files.
//
// What karpgate cannot see, it says: Karpenter's own in-memory state (a node
// nominated for pending pods, the candidate it is working on) and whether
// consolidation's scheduling simulation finds a cheaper home for the pods.
package explain
