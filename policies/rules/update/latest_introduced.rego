# METADATA
# title: Update introduces an @latest AMI alias
# description: >-
#   Moving a pinned EC2NodeClass to @latest drifts every node at once when the
#   newest AMI is not the one they run, and again at every AMI release after
#   that.
# custom:
#   id: KG602
#   severity: warn
#   kinds: [EC2NodeClass]
#   points: [admission]
#   operations: [UPDATE]
#   fix: Keep the alias pinned and move it to a newer tested version when you choose to.
package karpgate.rules.update_latest_introduced

import data.karpgate.lib

violation contains {
	"msg": sprintf("this update switches the AMI selection to %q: every node of %s drifts now unless it already runs the newest AMI, and again at every AMI release", [alias, lib.ref(input.object)]),
	"path": sprintf("spec.amiSelectorTerms[%d].alias", [i]),
	"fix": lib.pin_fix(alias),
} if {
	input.operation == "UPDATE"
	some [i, alias] in lib.alias_terms
	lib.alias_version(alias) == "latest"
	not old_follows_latest
}

old_follows_latest if {
	some term in input.oldObject.spec.amiSelectorTerms
	is_string(term.alias)
	lib.alias_version(term.alias) == "latest"
}
