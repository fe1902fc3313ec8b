// Package holdrecord is the budget karpgate adds to a NodePool to hold drift
// (the rollout guard's hold, or a freeze) and the record it leaves beside it
// in the karpgate.io/rollout-guard annotation: how to read the record,
// whether it vouches for a budget (Held), which write ends a hold (Resumes)
// and which dates a write may set (CheckDates). It is pure data, so that the
// policy engine (which exempts a vouched-for hold from the budget rules), the
// admission webhooks (which keep a hold through writes and refuse deleting a
// frozen NodePool) and the disruption loop (disruption/guard, which writes
// and lifts holds) share it without the engine depending on the loop. The
// record's By names the holder; a new holder adds its own value, and all of
// the above holds for it unchanged.
//
// # What a record does not prove
//
// A record is not signed, and karpgate does not tell its own writes from
// others': `karpgate freeze` writes with the credentials of whoever runs it,
// holds are made by hand while karpgate is down, and field managers are
// names clients choose. Signing with a key only karpgate's service account
// can read would not change that: a person who freezes would need the key to
// sign, which is to say could forge with it, and a freeze that is not signed
// must still hold. So the checks make a forged record gain its writer
// nothing that `karpgate freeze` and `karpgate resume`, which need the same
// permission on the same NodePool, do not give:
//
//   - A valid record (Held) vouches for karpgate's budget {nodes: "0",
//     reasons: [Drifted]} at the recorded index and for nothing else. That
//     budget is then a hold in every respect: the budget rules leave it out
//     (KG301), the mutating webhook keeps it through writes, status and the
//     alerts report it, a frozen NodePool may not be deleted, and `karpgate
//     resume` lifts it. That is a freeze, which the writer could have made.
//   - A record of another budget, or of one no longer at its index, vouches
//     for nothing: no rule exempts it, the webhook keeps nothing for it, the
//     cluster-wide freeze does not count it, and resume removes the record
//     and no budget.
//   - A resume (Resumes) ends a hold whatever its since, which no check
//     compares with another machine's clock; only an instant later than
//     the stored resume counts, so a NodePool exported into Git after an
//     earlier resume does not lift a later freeze when it is applied
//     again; a since, or a resume, dated more than MaxSkew after
//     karpgate's clock is refused when written.
//
// What remains possible for someone who may write a NodePool: to hold and
// lift its drift (as freeze and resume do), to delete it once its freeze is
// lifted, to make its hold read as the rollout guard's rather than a freeze
// (By), which the loop lifts whenever the guard is off, to set its resumed
// annotation to now, which makes the guard ignore the NodeClaims launched so
// far (as resume does), and, with --rollout-guard-freeze-after N, to trip
// the cluster-wide freeze by writing guard records on N NodePools they may
// write: that freezes drift in every NodePool, those they may not write
// included, until someone runs `karpgate resume --all`. The freeze is
// reported (the DriftFrozen event, the KarpgateDriftFrozen alert), and the
// API server's audit log names who wrote the records.
package holdrecord
