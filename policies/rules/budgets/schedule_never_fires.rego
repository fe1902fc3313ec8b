# METADATA
# title: Budget schedule that never fires
# description: >-
#   A schedule that matches no date, such as 0 0 30 2 * (30 February), never
#   fires. robfig/cron then answers with the zero time and Karpenter reads
#   that as "active", so the budget restricts at all times: the opposite of
#   what a window that never opens suggests.
# custom:
#   id: KG304
#   noTwin: 'It needs Karpenter''s cron parser and the windows the budgets open over time.'
#   severity: warn
#   kinds: [NodePool]
#   fix: Fix the date in the schedule, or remove schedule and duration if the budget should always apply.
package karpgate.rules.budgets_schedule_never_fires

import data.karpgate.lib

violation contains {
	"msg": sprintf("schedule %q matches no date, and Karpenter treats a schedule that never fires as always active, so budgets[%d] (nodes %q) restricts at all times", [input.object.spec.disruption.budgets[b.index].schedule, b.index, b.nodes]),
	"path": sprintf("%s.schedule", [lib.budget_path(b.index)]),
} if {
	some b in lib.budget_analysis.budgets
	b.neverFires
}
