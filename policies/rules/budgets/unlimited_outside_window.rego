# METADATA
# title: Reason unlimited outside a budget's window
# description: >-
#   Budgets only restrict. A reason is unlimited whenever no active budget
#   covers it, so a budget with a schedule limits disruptions while its
#   window is open and allows any number the rest of the time. People often
#   read windows the other way round, as "allowed only here". The message
#   says exactly when each reason is unlimited (UTC, as Karpenter computes).
# custom:
#   id: KG302
#   noTwin: 'It needs Karpenter''s cron parser and the windows the budgets open over time.'
#   severity: warn
#   kinds: [NodePool]
#   fix: 'If disruptions should happen only inside a window, block the rest of the time instead: a nodes "0" budget whose schedule starts when your window ends and lasts until it opens again, plus an always-active budget with the number you want inside the window.'
package karpgate.rules.budgets_unlimited_outside_window

import data.karpgate.lib

violation contains {
	"msg": sprintf("%s disruptions are unlimited whenever no budget covering them is active, %s", [lib.and_list(reasons), when]),
	"path": lib.budget_path(first),
} if {
	analysis := lib.budget_analysis
	some when in {r.unlimited | some r in analysis.reasons; r.unlimited != ""}
	reasons := [reason | some reason in lib.reasons; analysis.reasons[reason].unlimited == when]
	first := min({i | some reason in reasons; some i in analysis.reasons[reason].scheduled})
}
