# METADATA
# title: Uses deny instead of violation
# custom:
#   id: ACME3
#   severity: warn
#   kinds: [NodePool]
package karpgate.rules.acme_deny

deny contains "x" if true
