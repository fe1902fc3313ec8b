# METADATA
# title: Waiver expiry does not read
# description: >-
#   A waiver that starts with "until" must follow it with a date
#   (2027-01-31, waived through that day in UTC) or an RFC 3339 instant, then
#   the reason. One whose expiry does not read waives nothing: karpgate will
#   not guess when it should end.
# custom:
#   id: KG004
#   noTwin: 'It needs Go''s date parser (time.Parse), which CEL has no equal of.'
#   severity: warn
#   kinds: ["*"]
#   waivable: false
#   fix: 'Write the waiver as "until 2027-01-31: <reason>", or drop the expiry.'
package karpgate.rules.waivers_until_unreadable

import data.karpgate.lib

violation contains {
	"msg": sprintf("waiver for %s is ignored: %s", [w.rule, w.untilProblem]),
	"path": lib.annotation_path(w.annotation),
} if {
	some w in input.waivers
	w.untilProblem
}
