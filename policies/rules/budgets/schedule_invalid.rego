# METADATA
# title: Budget schedule Karpenter cannot parse
# description: >-
#   Karpenter parses budget schedules with robfig/cron's standard parser in
#   UTC. The CRD's loose pattern lets most invalid schedules through, and at
#   runtime Karpenter then allows zero voluntary disruptions of the NodePool,
#   for every reason, until the schedule is fixed. Wrap-around ranges such as
#   sat-sun (Karpenter's own docs used one) and 7 for Sunday are the usual
#   culprits.
# custom:
#   id: KG201
#   noTwin: 'It needs Karpenter''s cron parser (robfig/cron v3) and its errors, which CEL has no equal of.'
#   severity: deny
#   kinds: [NodePool]
#   fix: 'Write five fields with ranges low to high (sat,sun instead of sat-sun; 0 for Sunday), or one of @yearly, @monthly, @weekly, @daily, @hourly.'
package karpgate.rules.budgets_schedule_invalid

import data.karpgate.lib

violation contains v if {
	some p in lib.budget_problems("schedule")
	v := lib.budget_violation(p)
}
