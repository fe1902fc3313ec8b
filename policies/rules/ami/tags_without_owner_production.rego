# METADATA
# title: AMI tags selector without owner in production
# description: >-
#   A tags selector without owner matches any AMI with those tags that your
#   account can see, including newer ones and AMIs shared by other accounts,
#   so production picks up AMIs nobody tested.
# custom:
#   id: KG104
#   severity: warn
#   kinds: [EC2NodeClass]
#   fix: Add owner (your account ID, or "amazon") to the term, or select the AMI by id.
package karpgate.rules.ami_tags_without_owner_production

violation contains {
	"msg": sprintf("AMI selector term %d selects by tags (%s) without owner: any visible AMI with those tags, from any account and of any age, can be chosen", [i, concat(", ", sort(object.keys(term.tags)))]),
	"path": sprintf("spec.amiSelectorTerms[%d].tags", [i]),
} if {
	input.production
	some i, term in input.object.spec.amiSelectorTerms
	is_object(term.tags)
	not term.owner
	not term.id
}
