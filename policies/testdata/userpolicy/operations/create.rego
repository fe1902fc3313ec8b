# METADATA
# title: NodePool weight judged on create only
# custom:
#   id: ACME8
#   severity: warn
#   kinds: [NodePool]
#   operations: [CREATE]
package karpgate.rules.acme_weight_on_create

violation contains {"msg": "weight is set at creation", "path": "spec.weight"} if input.object.spec.weight
