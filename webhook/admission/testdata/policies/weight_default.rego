# METADATA
# title: NodePool without a weight
# description: A user mutation whose patch adds a value the JSON zero of which must survive encoding.
# custom:
#   id: ACME701
#   severity: warn
#   mutates: true
#   kinds: [NodePool]
#   points: [admission]
package karpgate.rules.acme_weight_default

violation contains {
	"msg": "karpgate set weight: 0",
	"path": "spec.weight",
	"patch": [{"op": "add", "path": "/spec/weight", "value": 0}],
} if {
	not input.object.spec.weight
}
