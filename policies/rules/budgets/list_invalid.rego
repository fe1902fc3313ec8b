# METADATA
# title: Malformed budgets list
# description: >-
#   spec.disruption.budgets must be a list of at most 50 budget objects.
# custom:
#   id: KG206
#   severity: deny
#   kinds: [NodePool]
#   fix: 'Write budgets as a list of objects with nodes and optionally schedule, duration and reasons.'
package karpgate.rules.budgets_list_invalid

import data.karpgate.lib

violation contains v if {
	some p in lib.budget_problems("list")
	v := lib.budget_violation(p)
}
