# METADATA
# title: Pool change while draining
# description: Shows that UPDATE rules see the old object and can return a JSON patch.
# custom:
#   id: ACME200
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.acme_weight_change

violation contains {
	"msg": sprintf("weight changed from %d to %d", [input.oldObject.spec.weight, input.object.spec.weight]),
	"path": "spec.weight",
	"patch": [{"op": "replace", "path": "/spec/weight", "value": input.oldObject.spec.weight}],
} if {
	input.operation == "UPDATE"
	input.oldObject.spec.weight != input.object.spec.weight
}
