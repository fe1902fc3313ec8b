# METADATA
# title: Unknown disruption reason in a budget
# description: >-
#   A v1 budget's reasons are exactly Underutilized, Empty and Drifted;
#   matching is case-sensitive and the API server rejects anything else.
#   v1beta1 budgets have no reasons at all.
# custom:
#   id: KG204
#   severity: deny
#   kinds: [NodePool]
#   fix: 'Spell the reason exactly: Underutilized, Empty or Drifted.'
package karpgate.rules.budgets_reason_invalid

import data.karpgate.lib

violation contains v if {
	some p in lib.budget_problems("reasons")
	v := lib.budget_violation(p)
}
