# METADATA
# title: Waiver of a rule that cannot be waived
# description: >-
#   Some rules cannot be waived: those about waivers themselves, and those
#   karpgate.yaml marks waivable false (rules.<ID>.waivable), such as a
#   production rule a platform team will not let teams opt out of. A waiver
#   of one waives nothing, and the finding it meant to waive still counts.
# custom:
#   id: KG005
#   severity: warn
#   kinds: ["*"]
#   waivable: false
#   fix: Remove the annotation and fix what the rule reports; ask the owners of karpgate.yaml if the rule should be waivable.
package karpgate.rules.waivers_unwaivable

import data.karpgate.lib

violation contains {
	"msg": sprintf("%s cannot be waived (%s), so this waiver waives nothing", [w.rule, why]),
	"path": lib.annotation_path(w.annotation),
} if {
	some w in input.waivers
	why := data.karpgate.engine.unwaivable[w.rule]
}
