// Package events decides which Kubernetes Events a NodePool gets by
// comparing two of its statuses: a reason's window opening or closing,
// budgets becoming invalid or valid again, a drift rollout starting or
// finishing, the rollout guard holding or lifting, drift frozen or unfrozen. Nothing is said when
// nothing changed, so the loop can compare on every reconcile.
//
// A window is "closed" for a reason when its binding budgets allow zero
// disruptions before nodes already disrupting are subtracted (a budget of
// nodes "0", or a percentage of an empty pool) and "open" otherwise. Nodes
// starting and finishing their disruption therefore never open or close it,
// which keeps a rollout from flooding the NodePool with events.
package events
