// Package progress is a RolloutPlan's state machine: from the plan (its
// spec, its last status, the abort and retry requests on it), the
// membership of its waves and what each NodePool shows now, Step computes
// the next status, which NodePools must be held or released, the Events
// to record and when to look again. It is pure (no I/O, the time passed
// in), so every transition is a table test, and everything it needs to
// continue is in the status it returns: a restart, a new leader or a lost
// replica continues from the stored status.
//
// The rules:
//   - Idle: nothing the plan paces is drifted. The first wave's NodePools
//     are released (maxRollingNodePools of them), every other NodePool of
//     the plan is held: the next change starts in the canary even before
//     karpgate sees it, and nowhere else.
//   - Drift appears: a pass starts at the first wave with drift; waves
//     before it with nothing drifted pass at once. The wave's drifted
//     NodePools are released (at most maxRollingNodePools at a time, those
//     already rolling first), everything else is held.
//   - The wave's drifted NodeClaims are all replaced and every new one has
//     a Ready Node: it soaks. The gates are judged all along; when the
//     soak ends with them passing, the next wave with drift starts, or the
//     pass completes and the plan is Idle (Ready) again.
//   - Drift newer than the end of a wave already done (a second change
//     mid-rollout) restarts the pass at the first wave: the change goes
//     canary first like any other. A NodePool that joins a done wave with
//     older drift rolls in the next pass.
//   - A failing gate holds every NodePool of the plan (Failed, Stalled);
//     a retry request rolls the wave again, judging only NodeClaims
//     launched after it.
//   - spec.paused holds the next wave: the current one finishes and
//     soaks, then the plan waits (Paused) until unpaused.
//   - An abort request holds the rolling wave too and then changes no hold
//     at all (Aborted, Stalled): people lift the holds with `karpgate
//     resume`, or retry the plan.
//   - A NodePool whose only drift has a reason the plan does not govern is
//     released while it has nothing the plan paces, so that drift rolls
//     at the NodePool's own budgets.
//
// A freeze or the rollout guard may hold a NodePool the plan would
// release: the plan waits for it (the wave lists it as Frozen) and never
// lifts a hold it did not place.
package progress
