# METADATA
# title: Update takes an object out of production
# description: >-
#   Unless karpgate.yaml sets environment for the whole cluster, an object is
#   production by its own label (karpgate.io/environment) or EC2NodeClass tag
#   (environment), which whoever edits the object controls. An update is judged
#   as production when the old or the new object is, so the write that removes
#   the label still meets KG101, KG108 and KG109; this rule asks that taking an
#   object out of production be deliberate: a waiver with a reason, which
#   reviewers and `karpgate lint` see.
# custom:
#   id: KG604
#   severity: deny
#   kinds: [NodePool, EC2NodeClass]
#   points: [admission]
#   operations: [UPDATE]
#   fix: Keep the production label or tag. If the object really leaves production, say why in the annotation karpgate.io/waive-KG604, added in a write before the one that removes the label; better, set environment in karpgate.yaml for the whole cluster, which no object can change.
package karpgate.rules.update_production_removed

import data.karpgate.lib

violation contains {
	"msg": sprintf("this update takes %s out of production (%s was %q, now %s): every production rule would stop judging it", [lib.ref(input.object), where, old_value, new_value_text(path)]),
	"path": path,
} if {
	input.operation == "UPDATE"
	input.oldObjectProduction
	not input.objectProduction
	some [path, where, old_value] in removed
}

production_value(v) if {
	is_string(v)
	lower(v) in {lower(p) | some p in data.karpgate.config.production.values}
}

removed contains [sprintf("metadata.labels[%s]", [key]), sprintf("label %s", [key]), old] if {
	some key in data.karpgate.config.production.labels
	old := input.oldObject.metadata.labels[key]
	production_value(old)
	not production_value(object.get(input.object, ["metadata", "labels", key], null))
}

removed contains [sprintf("spec.tags[%s]", [key]), sprintf("tag %s", [key]), old] if {
	input.object.kind == "EC2NodeClass"
	some key in data.karpgate.config.production.tags
	old := input.oldObject.spec.tags[key]
	production_value(old)
	not production_value(object.get(input.object, ["spec", "tags", key], null))
}

new_value_text(path) := sprintf("%q", [v]) if {
	startswith(path, "metadata.labels[")
	v := input.object.metadata.labels[trim_suffix(trim_prefix(path, "metadata.labels["), "]")]
} else := sprintf("%q", [v]) if {
	startswith(path, "spec.tags[")
	v := input.object.spec.tags[trim_suffix(trim_prefix(path, "spec.tags["), "]")]
} else := "removed"
