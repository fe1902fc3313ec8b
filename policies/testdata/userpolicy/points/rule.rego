# METADATA
# title: NodePool weight set at admission
# custom:
#   id: ACME6
#   severity: warn
#   kinds: [NodePool]
#   points: [admission]
package karpgate.rules.acme_weight_at_admission

violation contains {"msg": "weight is set", "path": "spec.weight"} if input.object.spec.weight
