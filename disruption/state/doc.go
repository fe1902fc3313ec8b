// Package state is the slice of cluster state the disruption loop reads:
// minimal views of Karpenter's NodePool, NodeClaim and EC2NodeClass (decoded
// straight from the API's JSON, so every other field is dropped on arrival),
// trims that cut those views and core Nodes down to the fields the loop uses
// before they reach a cache, and a Snapshot that groups everything by
// NodePool.
//
// karpgate does not import Karpenter's Go module; these types name only the
// fields karpgate reads, with Karpenter's JSON names.
package state
