# METADATA
# title: AMI name selector with a wildcard in production
# description: >-
#   A name selector with ? matches AMIs published after you tested the class
#   whose names differ in those characters, so it can roll new AMIs into
#   production the same way @latest does. A name with * matches every newer
#   AMI of its series and is KG109's, which denies it.
# custom:
#   id: KG103
#   severity: warn
#   kinds: [EC2NodeClass]
#   fix: Select the tested AMI by id, or by its exact name together with owner.
package karpgate.rules.ami_name_wildcard_production

violation contains {
	"msg": sprintf("name selector %q has a ? wildcard: every new AMI that matches it drifts and replaces the nodes of this production EC2NodeClass", [term.name]),
	"path": sprintf("spec.amiSelectorTerms[%d].name", [i]),
} if {
	input.production
	some i, term in input.object.spec.amiSelectorTerms
	is_string(term.name)
	contains(term.name, "?")

	# A * floats: KG109 reports the term, and a second finding on the same
	# field would only need a second waiver.
	not contains(term.name, "*")
}
