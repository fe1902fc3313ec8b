# METADATA
# title: A rule for an operation karpgate is never called for
# custom:
#   id: ACME9
#   severity: warn
#   kinds: [NodePool]
#   operations: [DELETE]
package karpgate.rules.acme_on_delete

violation contains {"msg": "deleted"} if input.object.kind == "NodePool"
