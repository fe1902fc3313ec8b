# METADATA
# title: Waiver without a reason
# description: >-
#   A karpgate.io/waive-<rule> annotation must say why the rule does not
#   apply, so the next reader can judge whether it still holds. A waiver with
#   an empty reason waives nothing.
# custom:
#   id: KG001
#   severity: warn
#   kinds: ["*"]
#   waivable: false
#   fix: Write the reason as the annotation's value, for example "staging pool, AMIs tested by the nightly job".
package karpgate.rules.waivers_without_reason

import data.karpgate.lib

violation contains {
	"msg": sprintf("waiver for %s has no reason, so it is ignored", [trim_prefix(key, "karpgate.io/waive-")]),
	"path": lib.annotation_path(key),
} if {
	some key, value in lib.annotations
	startswith(key, "karpgate.io/waive-")
	trim_space(sprintf("%v", [value])) == ""
}
