// Package gates judges a wave of a RolloutPlan by its new nodes: the
// NodeClaims launched for the wave since it was released (or retried),
// their Nodes and the pods on them. It is a pure function of the wave's
// state.Pools, the instant the wave started, its gates and the time:
//
//   - NodesReady: every new NodeClaim has a Ready Node within
//     nodeReadyTimeout of its creation;
//   - NodeClaimsLaunched: at most maxFailedNodeClaims new NodeClaims fail
//     to launch, register or initialize (a Launched, Registered or
//     Initialized condition False, Launched left Unknown with a launch
//     error), and Karpenter has not marked a NodePool of the wave
//     NodeRegistrationHealthy=False since the wave started;
//   - PodsReady: of the pods on the new nodes that have run
//     podReadyTimeout, at least minPodsReadyPercent are Ready.
//
// Drifted, terminating and deleting NodeClaims are the old nodes, not new
// ones, and never count. A NodeClaim Karpenter deletes after its launch or
// registration timeout is gone before it can be counted; the NodePool's
// NodeRegistrationHealthy condition is what says so.
package gates
