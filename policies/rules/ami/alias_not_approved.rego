# METADATA
# title: AMI alias version not approved for production
# description: >-
#   karpgate.yaml amis.approvedAliasVersions lists the AMI versions tested for
#   each family; a production EC2NodeClass pinned to another version runs
#   AMIs that skipped that process.
# custom:
#   id: KG108
#   severity: deny
#   kinds: [EC2NodeClass]
#   fix: Pin one of the approved versions, or add this version to amis.approvedAliasVersions once it is tested.
package karpgate.rules.ami_alias_not_approved

import data.karpgate.lib

violation contains {
	"msg": sprintf("alias %q pins a version that is not approved for production; approved: %s", [alias, concat(", ", approved)]),
	"path": sprintf("spec.amiSelectorTerms[%d].alias", [i]),
} if {
	input.production
	some [i, alias] in lib.alias_terms
	version := lib.alias_version(alias)
	version != "latest" # KG101 reports @latest
	approved := lib.approved_versions(lib.alias_family(alias))
	count(approved) > 0
	not version in {lower(v) | some v in approved}
}
