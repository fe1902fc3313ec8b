# METADATA
# title: NodeOverlay without a weight
# description: Overlays without a weight tie with each other.
# custom:
#   id: ACME010
#   severity: deny
#   kinds: ["*"]
#   fix: Set spec.weight.
package karpgate.rules.acme_overlay_weight

violation contains {"msg": "the overlay sets no weight, so it ties with the others", "path": "spec.weight"} if {
	input.object.kind == "NodeOverlay"
	not input.object.spec.weight
}
