# METADATA
# title: Waiver names an unknown rule
# description: >-
#   A waiver for a rule ID that does not exist waives nothing, usually because
#   of a typo in the ID; the finding it meant to waive is still reported.
# custom:
#   id: KG002
#   severity: warn
#   kinds: ["*"]
#   waivable: false
#   fix: Use the rule ID exactly as karpgate reports it, such as KG101.
package karpgate.rules.waivers_unknown_rule

import data.karpgate.lib

violation contains {
	"msg": sprintf("waiver names rule %q, which does not exist", [id]),
	"path": lib.annotation_path(key),
} if {
	some key, _ in lib.annotations
	id := trim_prefix(key, "karpgate.io/waive-")
	id != key
	not data.karpgate.engine.rule_ids[id]
}
