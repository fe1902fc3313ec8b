# METADATA
# title: A rule for an enforcement point that does not exist
# custom:
#   id: ACME5
#   severity: warn
#   kinds: [NodePool]
#   points: [audit]
package karpgate.rules.acme_audit

violation contains {"msg": "never"} if false
