# METADATA
# title: "@latest alias pinned to an approved version"
# description: >-
#   With karpgate.yaml mutations.pinLatestAlias, the mutating webhook replaces
#   @latest in a production EC2NodeClass with the first version
#   amis.approvedAliasVersions lists for the family, so an AMI release does
#   not replace production nodes nobody planned to replace. Families without
#   approved versions, and Windows (only @latest exists), are left alone.
# custom:
#   id: KG702
#   noTwin: 'A mutation: a ValidatingAdmissionPolicy cannot change the object.'
#   severity: warn
#   kinds: [EC2NodeClass]
#   points: [admission]
#   mutates: true
#   fix: Pin the alias in the manifest, so that it applies the same without karpgate.
package karpgate.rules.mutation_pin_latest_alias

import data.karpgate.lib

violation contains {
	"msg": sprintf("karpgate pinned %q to %q, the first approved version for %s, so that AMI releases do not replace production nodes unplanned", [alias, pinned, family]),
	"path": sprintf("spec.amiSelectorTerms[%d].alias", [i]),
	"patch": [
		{"op": "test", "path": sprintf("/spec/amiSelectorTerms/%d/alias", [i]), "value": alias},
		{"op": "replace", "path": sprintf("/spec/amiSelectorTerms/%d/alias", [i]), "value": pinned},
	],
} if {
	data.karpgate.config.mutations.pinLatestAlias
	input.production
	some [i, alias] in lib.alias_terms
	lib.alias_version(alias) == "latest"
	family := lib.alias_family(alias)
	versions := lib.approved_versions(family)
	count(versions) > 0
	pinned := sprintf("%s@%s", [family, versions[0]])
}
