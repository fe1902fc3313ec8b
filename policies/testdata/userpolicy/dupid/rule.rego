# METADATA
# title: Duplicate
# custom:
#   id: ACME1
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.acme_one

violation contains {"msg": "x"} if false
