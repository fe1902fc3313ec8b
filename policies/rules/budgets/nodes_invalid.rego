# METADATA
# title: Malformed budget nodes
# description: >-
#   nodes is a string holding a whole number ("5") or a percentage from 0% to
#   100% ("10%"); an unquoted number is not a string and the API server
#   rejects it.
# custom:
#   id: KG205
#   severity: deny
#   kinds: [NodePool]
#   fix: 'Quote the value and write a whole number or a percentage, such as "0", "5" or "10%".'
package karpgate.rules.budgets_nodes_invalid

import data.karpgate.lib

violation contains v if {
	some p in lib.budget_problems("nodes")
	v := lib.budget_violation(p)
}
