# METADATA
# title: Floating AMI selector in production
# description: >-
#   An amiSelectorTerms entry that names no release follows every AMI release
#   as @latest does (KG101): an ssmParameter naming one of AWS's public
#   parameters for the newest AMI (under /aws/service/, with recommended,
#   latest or current in its path), a name with a *, or tags alone with a *
#   in a value. The day a new AMI matches, drift replaces every node of the
#   production EC2NodeClass with it. A parameter of your own (outside
#   /aws/service/) and exact tag values on images you own are not judged:
#   they move only when you move them.
# custom:
#   id: KG109
#   severity: deny
#   kinds: [EC2NodeClass]
#   fix: Pin the AMI you tested, by id, by its exact name with owner, by a versioned alias such as al2023@v20240807, or by the SSM parameter of that release.
package karpgate.rules.ami_floating_production

import data.karpgate.lib

violation contains {
	"msg": sprintf("AMI selector term %d floats: %s, so each release drifts and replaces every node of this production EC2NodeClass", [term.index, term.what]),
	"path": term.path,
	"fix": term.fix,
} if {
	input.production
	some term in lib.floating_ami_terms
}
