# METADATA
# title: Pretends to be built in
# custom:
#   id: KG900
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.acme_kg

violation contains {"msg": "x"} if false
