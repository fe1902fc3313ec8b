// Package membership says which NodePools are in which wave of a
// RolloutPlan, and which plan a NodePool belongs to when several plans
// select it. It is pure: the controller, the admission webhook and
// `karpgate rollout status` all call it, so that they cannot disagree.
//
// A NodePool belongs to the first wave whose nodePoolSelector matches it
// and whose nodePools count has room for it: a wave takes the NodePools its
// selector matches that no earlier wave took, in name order, as many as its
// count or percentage (rounded up) says. Membership is recomputed on every
// change, so a NodePool added, relabelled or deleted mid-rollout moves with
// it; a percentage wave's share changes when the number of NodePools does.
//
// A NodePool belongs to at most one plan: admission refuses a plan or a
// NodePool label change that would put it in two. If two plans still
// select it (both written at once, or admission was down), the oldest plan
// (creation time, then name) has it, and the younger names it as a
// conflict and leaves it alone.
package membership
