# METADATA
# title: Budget duration the CRD rejects
# description: >-
#   Budget durations take hours and minutes only (8h, 90m, 1h30m); seconds,
#   days and fractions are rejected by the API server.
# custom:
#   id: KG202
#   severity: deny
#   kinds: [NodePool]
#   fix: 'Write the duration in hours and minutes, such as 8h, 90m or 1h30m; a day is 24h.'
package karpgate.rules.budgets_duration_invalid

import data.karpgate.lib

violation contains v if {
	some p in lib.budget_problems("duration")
	v := lib.budget_violation(p)
}
