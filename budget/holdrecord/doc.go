// Package holdrecord is the budget karpgate adds to a NodePool to hold drift
// (the rollout guard's hold, or a freeze) and the record it leaves beside
// it in the karpgate.io/rollout-guard annotation: how to read the record
// and whether it vouches for a budget. It is pure data, so that the policy
// engine (which exempts a vouched-for hold from the budget rules) and the
// disruption loop (disruption/guard, which writes and lifts holds) share
// it without the engine depending on the loop.
package holdrecord
