# METADATA
# title: Waiver without a reason
# description: >-
#   A karpgate.io/waive-<rule> annotation must say why the rule does not
#   apply, so the next reader can judge whether it still holds. A waiver with
#   an empty reason (before or after an expiry) waives nothing.
# custom:
#   id: KG001
#   noTwin: 'Whether the waiver reads depends on its expiry, which only Go''s date parser (time.Parse) reads as the rule does; CEL has no equal of it.'
#   severity: warn
#   kinds: ["*"]
#   waivable: false
#   fix: Write the reason as the annotation's value, for example "staging pool, AMIs tested by the nightly job".
package karpgate.rules.waivers_without_reason

import data.karpgate.lib

violation contains {
	"msg": sprintf("waiver for %s has no reason, so it is ignored", [w.rule]),
	"path": lib.annotation_path(w.annotation),
} if {
	some w in input.waivers
	w.reason == ""
	not w.untilProblem
}
