# METADATA
# title: Floating AMI selector
# description: >-
#   Outside production a floating amiSelectorTerms entry (a public AWS
#   parameter for the newest AMI, a name with a *, tags alone with a * in a
#   value; see KG109) is a choice, but it still means every AMI release
#   drifts every node of the EC2NodeClass, on the release's schedule rather
#   than yours.
# custom:
#   id: KG110
#   severity: warn
#   kinds: [EC2NodeClass]
#   fix: Pin the AMI you tested (id, exact name with owner, versioned alias or versioned SSM parameter), or accept that every AMI release replaces these nodes.
package karpgate.rules.ami_floating

import data.karpgate.lib

violation contains {
	"msg": sprintf("AMI selector term %d floats: %s; each release drifts and replaces every node of this EC2NodeClass", [term.index, term.what]),
	"path": term.path,
	"fix": term.fix,
} if {
	not input.production
	some term in lib.floating_ami_terms
}
