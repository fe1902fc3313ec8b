# METADATA
# title: "@latest AMI alias in production"
# description: >-
#   An alias ending in @latest follows every AMI release: the day a new AMI is
#   published, drift replaces every node of the EC2NodeClass with it. In
#   production that is an untested, fleet-wide rollout nobody scheduled.
# custom:
#   id: KG101
#   severity: deny
#   kinds: [EC2NodeClass]
#   fix: Pin the alias to a version you have tested, such as al2023@v20240807; karpgate.yaml amis.approvedAliasVersions lists the approved ones.
package karpgate.rules.ami_latest_production

import data.karpgate.lib

violation contains {
	"msg": sprintf("alias %q follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass", [alias]),
	"path": sprintf("spec.amiSelectorTerms[%d].alias", [i]),
	"fix": lib.pin_fix(alias),
} if {
	input.production
	some [i, alias] in lib.alias_terms
	lib.alias_version(alias) == "latest"
}
