// Package guard is karpgate's rollout guard: when NodeClaims launched during
// a drift rollout do not get a Ready Node in time, it holds the rollout by
// adding the budget {nodes: "0", reasons: [Drifted]} to the NodePool, and it
// lifts the hold again on request. A freeze (`karpgate freeze`, or the
// guard's cluster-wide trip) is the same budget and record, marked
// "by": "freeze", added to many NodePools at once (FreezeAll) and lifted
// only by people (ResumeAll); records without the mark, including every
// one written before freezes existed, are the guard's own holds.
//
// Budgets carry no metadata, so the NodePool's karpgate.io/rollout-guard
// annotation records the exact budget added and its index. Lifting removes
// the budget at that index only if it still equals the recorded one; if no
// equal budget is left, someone already removed it and only the annotation
// goes; if an equal budget sits elsewhere, karpgate cannot tell its own from
// the user's and changes nothing. A user budget of the same value therefore
// always survives. Every write is a merge patch carrying the resourceVersion
// it was computed from, so a concurrent edit makes it fail and be recomputed
// instead of overwriting the edit.
//
// A hold lasts until it is resumed, whoever writes the NodePool meanwhile:
// the mutating webhook asks Keep on every write and puts the budget and its
// record back when the write would drop them (a GitOps controller applying
// the NodePool from Git). Only a hold the stored record vouches for is kept
// (holdrecord.Held). A resume is a write that removes the record (or hands
// it to another holder) and sets the annotation
// karpgate.io/rollout-guard-resumed to an instant later than the stored
// one, as Lift does in one write (holdrecord.Resumes); the instant is never
// compared with the hold's since, which another machine's clock wrote. Release reads the
// NodePool back and reports a hold that came back (ErrNotLifted).
package guard
