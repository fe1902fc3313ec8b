# METADATA
# title: AMI alias family disagrees with amiFamily
# description: >-
#   With an alias, Karpenter takes the AMI family (and so the bootstrap format
#   of the user data) from the alias. An amiFamily naming another family is
#   ignored or contradicts it, and user data written for that family breaks.
#   amiFamily Custom is exempt: with an alias it is the documented way to run
#   the alias's AMI with user data written in full by you (Karpenter's
#   github.com/aws/karpenter-provider-aws/examples/v1/custom-family-with-alias.yaml).
# custom:
#   id: KG105
#   severity: warn
#   kinds: [EC2NodeClass]
#   fix: Remove spec.amiFamily, or make it the alias's family.
package karpgate.rules.ami_alias_family_mismatch

import data.karpgate.lib

violation contains {
	"msg": sprintf("amiFamily %q disagrees with alias %q, which selects %s AMIs", [input.object.spec.amiFamily, alias, lib.alias_family(alias)]),
	"path": "spec.amiFamily",
} if {
	is_string(input.object.spec.amiFamily)
	lower(input.object.spec.amiFamily) != "custom"
	some [_, alias] in lib.alias_terms
	lower(input.object.spec.amiFamily) != lib.alias_family(alias)
}
