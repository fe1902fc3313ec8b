package karpenter

// Annotations karpgate's rollout guard writes on a NodePool. Budgets carry no
// metadata of their own, so the NodePool records which budget karpgate added.
const (
	// RolloutGuardAnnotation holds, as JSON, the budget karpgate added to hold
	// a drift rollout, its index and why.
	RolloutGuardAnnotation = "karpgate.io/rollout-guard"
	// RolloutGuardResumedAnnotation holds the RFC 3339 instant the guard was
	// last lifted; NodeClaims launched before it no longer trip the guard.
	RolloutGuardResumedAnnotation = "karpgate.io/rollout-guard-resumed"
)
