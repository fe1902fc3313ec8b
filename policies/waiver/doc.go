// Package waiver is the one home of the karpgate.io/waive-<rule>
// annotation's grammar and of the record of who set each waiver. The policy
// engine reads waivers with it (which findings are waived, what rules about
// waivers see in input.waivers), the mutating webhook keeps the record with
// it, and the audit of stored objects lists both.
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
// The record is the annotation karpgate.io/waivers-set-by, written only by
// the mutating webhook: for each waiver, the user the API server
// authenticated when the waiver was added or last changed, and when. It is
// rebuilt from the stored object on every write, so neither a client nor a
// GitOps apply can forge or drop it while the webhook runs; a waiver set
// while it did not run has no entry ("unknown").
package waiver
