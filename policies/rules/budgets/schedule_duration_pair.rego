# METADATA
# title: Budget with schedule but no duration, or the reverse
# description: >-
#   The CRD requires schedule and duration together: a window needs both a
#   start and a length. Without either, a budget is always active.
# custom:
#   id: KG203
#   severity: deny
#   kinds: [NodePool]
#   fix: 'Add the missing field, or remove both for an always-active budget.'
package karpgate.rules.budgets_schedule_duration_pair

import data.karpgate.lib

violation contains v if {
	some p in lib.budget_problems("pairing")
	v := lib.budget_violation(p)
}
