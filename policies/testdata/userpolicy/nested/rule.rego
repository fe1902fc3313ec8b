# METADATA
# title: Too deep
# custom:
#   id: ACME4
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.acme.nested

violation contains {"msg": "x"} if false
