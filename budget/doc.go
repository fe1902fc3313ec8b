// Package budget is karpgate's one home for Karpenter's disruption-budget
// semantics: reading spec.disruption.budgets, parsing schedules and durations
// exactly as Karpenter does, validating them with field paths, and computing
// how many voluntary disruptions each reason allows at an instant or over a
// stretch of time.
//
// Everything is pure and clock-injected: every function takes the instants it
// reasons about, and the maths is in UTC, as Karpenter's is. Compile a
// NodePool's budgets once into a Set and ask it many questions; the Rego
// builtins, `karpgate budgets` and the controller loop all do.
//
// The runtime rules, which differ from what users often expect:
//   - budgets only restrict: a reason that no active budget covers is unlimited;
//   - a budget is active while the last schedule hit is within its duration,
//     [hit, hit+duration) in UTC; no schedule and no duration means always;
//   - a schedule Karpenter's parser rejects blocks every reason of the
//     NodePool (Karpenter fails closed), whichever reasons the budget names;
//   - a schedule that never fires (such as "0 0 30 2 *") makes robfig/cron
//     return the zero time, which Karpenter reads as "active": such a budget
//     is always active, not never;
//   - percentages round up, nodes already disrupting are subtracted, floor 0.
package budget
