# METADATA
# title: NodeOverlay without a weight
# description: A rule that names NodeOverlay, which only rules for every kind judge.
# custom:
#   id: ACME10
#   severity: deny
#   kinds: [NodeOverlay]
package karpgate.rules.acme_overlay

violation contains {"msg": "the overlay sets no weight"} if {
	not input.object.spec.weight
}
