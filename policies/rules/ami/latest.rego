# METADATA
# title: "@latest AMI alias"
# description: >-
#   Outside production an @latest alias is a choice, but it still means every
#   AMI release drifts every node of the EC2NodeClass, on the release's
#   schedule rather than yours.
# custom:
#   id: KG102
#   severity: warn
#   kinds: [EC2NodeClass]
#   fix: Pin the alias to a tested version, such as al2023@v20240807, or accept that every AMI release replaces these nodes.
package karpgate.rules.ami_latest

import data.karpgate.lib

violation contains {
	"msg": sprintf("alias %q follows every AMI release: each release drifts and replaces every node of this EC2NodeClass", [alias]),
	"path": sprintf("spec.amiSelectorTerms[%d].alias", [i]),
	"fix": lib.pin_fix(alias),
} if {
	not input.production
	some [i, alias] in lib.alias_terms
	lib.alias_version(alias) == "latest"
}
