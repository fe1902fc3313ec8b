# METADATA
# title: Drift is never allowed
# description: >-
#   A budget with nodes "0" that covers Drifted and is always active (no
#   schedule, or windows that never close) holds drift at zero for good:
#   drifted nodes are never replaced, so new AMIs and changes to the NodePool
#   or EC2NodeClass never reach running nodes. Expiration still replaces
#   them, ignoring budgets. The hold that karpgate's rollout guard or
#   `karpgate freeze` adds is not judged while its karpgate.io/rollout-guard
#   record vouches for it (the record parses, names that very budget and its
#   index, and it is karpgate's budget {nodes "0", reasons [Drifted]}); a
#   record that does not parse or names another budget exempts nothing.
# custom:
#   id: KG301
#   noTwin: 'It needs Karpenter''s cron parser and the windows the budgets open over time.'
#   severity: warn
#   kinds: [NodePool]
#   fix: Give the nodes "0" budget a schedule and duration so drift can proceed outside it, or leave Drifted out of its reasons.
package karpgate.rules.budgets_drift_never_allowed

import data.karpgate.lib

violation contains {
	"msg": sprintf("budgets[%d] (nodes %q) is always active and covers Drifted, so drifted nodes are never replaced and updates never roll out", [i, b.nodes]),
	"path": lib.budget_path(i),
} if {
	r := lib.budget_analysis.reasons.Drifted
	r.neverAllowed
	i := min({x | some x in r.binding})
	some b in lib.budget_analysis.budgets
	b.index == i
}
