# METADATA
# title: NodePool weight judged on update only
# custom:
#   id: ACME7
#   severity: warn
#   kinds: [NodePool]
#   operations: [UPDATE]
package karpgate.rules.acme_weight_on_update

# The body does not look at input.operation: custom.operations alone keeps
# the rule from judging a CREATE.
violation contains {"msg": "weight is set", "path": "spec.weight"} if input.object.spec.weight
