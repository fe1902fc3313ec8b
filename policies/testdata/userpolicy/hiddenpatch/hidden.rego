# METADATA
# title: A patch built in the body
# description: Returns a patch the load-time check cannot see, without declaring mutates.
# custom:
#   id: ACME800
#   severity: warn
#   kinds: [NodePool]
#   points: [admission]
#   fix: Declare mutates.
package karpgate.rules.acme_hidden_patch

violation contains v if {
	input.object.kind == "NodePool"
	v := {"msg": "weight set", "path": "spec.weight", "patch": [{"op": "add", "path": "/spec/weight", "value": 1}]}
}
