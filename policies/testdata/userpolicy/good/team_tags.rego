# METADATA
# title: EC2NodeClass without the team tag
# custom:
#   id: ACME100
#   severity: deny
#   kinds: [EC2NodeClass]
#   fix: Add spec.tags.team.
package karpgate.rules.acme_team_tag

violation contains {"msg": sprintf("tag team must be one of %v", [sort(data.acme.teams)]), "path": "spec.tags"} if {
	# not f(x) is undefined, not true, when x is: default the missing tag.
	team := object.get(input.object, ["spec", "tags", "team"], "")
	not team in data.acme.teams
}
