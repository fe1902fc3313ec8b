# METADATA
# title: Budget that is never active
# description: >-
#   A scheduled budget whose windows never open (a zero duration, or no
#   window in the coming year) restricts nothing. It is usually a typo in the
#   duration or the schedule.
# custom:
#   id: KG303
#   noTwin: 'It needs Karpenter''s cron parser and the windows the budgets open over time.'
#   severity: warn
#   kinds: [NodePool]
#   fix: Give the budget a duration longer than zero and a schedule that fires, or remove it.
package karpgate.rules.budgets_never_active

import data.karpgate.lib

violation contains {
	"msg": sprintf("budgets[%d] (schedule %q, duration %q) is never active in the coming year, so it restricts nothing", [b.index, budget.schedule, budget.duration]),
	"path": lib.budget_path(b.index),
} if {
	some b in lib.budget_analysis.budgets
	b.neverActive
	budget := input.object.spec.disruption.budgets[b.index]
	is_string(budget.duration) # without one, KG203 reports the missing field
}
