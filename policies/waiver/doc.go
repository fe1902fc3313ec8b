// Package waiver is the one home of the karpgate.io/waive-<rule>
// annotation's grammar and of the record of who set each waiver. The policy
// engine reads waivers with it (which findings are waived, what rules about
// waivers see in input.waivers), the mutating webhook keeps the record with
// it, the validating webhook checks the record with it, and the audit of
// stored objects lists both.
//
// A waiver's value is its reason, optionally after an expiry:
//
//	karpgate.io/waive-KG101: "staging account, AMIs tested nightly"
//	karpgate.io/waive-KG101: "until 2027-01-31: migrating to pinned AMIs"
//	karpgate.io/waive-KG101: "until 2027-01-31T18:00:00Z: migration window"
//
// A date waives through the end of that day in UTC; an RFC 3339 instant
// waives until that instant. A waiver past its expiry, without a reason, or
// with an expiry that does not read waives nothing; rules KG001, KG003 and
// KG004 report each.
//
// # What a waiver waives
//
// A finding of rule R is waived when all of these hold:
//
//  1. R may be waived: its METADATA does not say waivable: false (the
//     rules about waivers) and karpgate.yaml does not set
//     rules.R.waivable: false (KG005 reports a waiver of one).
//  2. The object has an active waiver of R: a reason, a readable expiry if
//     any, not past it (Waiver.Active).
//  3. At admission, the waiver is not a same-write waiver of a production
//     denial (below).
//
// Lint and the audit of stored objects apply 1 and 2: nothing is being
// written there.
//
// # Same-write waivers (admission)
//
// A write's own waivers are those it adds or changes: annotations the
// stored object lacks or holds with another value (Changed; on a CREATE,
// every waiver). Unless karpgate.yaml names approvers (waivers.approvers)
// or sets waivers.allowSameWrite, a write's own waiver does not waive a
// finding when
//
//   - the request is production: karpgate.yaml's environment, or a
//     production label or tag (production.labels, production.tags) on the
//     object or on the stored object, so that a write removing the label
//     is still production (config.Config.IsProduction, input.production);
//   - the finding's action at admission is deny; and
//   - the stored object did not have the finding already, denied or
//     waived: the same rule, field path and value there, the test that
//     lets an UPDATE through a denial that predates it.
//
// The write is refused, and the denial names the rule, the waiver and the
// fix: add the waiver in a separate, earlier write that someone reviews,
// or name approvers. A waiver already stored, or added by a write of its
// own before the write it excuses, waives as in lint. What this stops is
// one write that both breaks a production rule and waives it; a user who
// may edit the object can still make the two writes, so where that matters
// name approvers: with approvers named, KG006 refuses a waiver anyone else
// adds or changes, and an approver's waiver waives at once, in the same
// write. waivers.allowSameWrite: true lets anyone's waiver do that, as
// karpgate once did.
//
// # The record of who set each waiver
//
// The record is the annotation karpgate.io/waivers-set-by: JSON, by rule
// ID, of the user the API server authenticated when the waiver was added
// or last changed, and when. The mutating webhook writes it on every write
// (NextRecord): for a waiver the write leaves as stored, the stored entry;
// for one it adds or changes, the request's user and the time; nothing for
// rules without a waiver. The validating webhook, which fails closed,
// refuses a write whose record is not that one (CheckRecord): an entry of
// a waiver the write leaves as stored must equal the stored one; one of a
// waiver it adds or changes must name the request's user, at a time within
// RecordClockTolerance of karpgate's clock; a rule without a waiver may
// keep only its stored entry. So a record karpgate admits was written by
// karpgate, or carried through unchanged from one it admitted. A write the
// mutating webhook did not see (it fails open) is refused if its waivers
// need a new entry, with a message saying the mutating webhook did not run;
// writes that leave the waivers as they are, such as controllers copying
// the record through, or that remove a waiver, go through. A waiver stored
// before karpgate checked records, or while no webhook ran, may have no
// entry ("unknown") or one karpgate cannot vouch for.
package waiver
