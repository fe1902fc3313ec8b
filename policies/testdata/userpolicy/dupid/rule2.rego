# METADATA
# title: Duplicate too
# custom:
#   id: ACME1
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.acme_two

violation contains {"msg": "x"} if false
