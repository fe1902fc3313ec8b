# METADATA
# title: Unknown disruption reason in a budget
# description: >-
#   A v1 budget's reasons are those of the Karpenter version judged:
#   Underutilized, Empty and Drifted, and Unhealthy from v1.15 on (node
#   repair paced by budgets). Matching is case-sensitive and the API server
#   rejects anything else. v1beta1 budgets have no reasons at all.
# custom:
#   id: KG204
#   severity: deny
#   kinds: [NodePool]
#   fix: Spell the reason exactly as the Karpenter version judged lists it (Underutilized, Empty, Drifted; Unhealthy from v1.15).
package karpgate.rules.budgets_reason_invalid

import data.karpgate.lib

# What the budget package finds about the reasons list itself (not a list,
# not strings, reasons on v1beta1). Whether a reason exists depends on the
# Karpenter version judged, which the rule below asks.
violation contains v if {
	some p in lib.budget_problems("reasons")
	not regex.match(`\.reasons\[[0-9]+\]$`, p.path)
	v := lib.budget_violation(p)
}

violation contains v if {
	lib.is_v1
	some i, b in input.object.spec.disruption.budgets
	some j, reason in b.reasons
	is_string(reason)
	not reason in lib.reasons
	v := object.union(
		{
			"msg": sprintf("%q is not a disruption reason of Karpenter %s; its reasons are %s (case matters)%s", [reason, lib.karpenter_version, lib.and_list(lib.reasons), lib.newer_release_note("budgetReasons", reason)]),
			"path": sprintf("%s.reasons[%d]", [lib.budget_path(i), j]),
		},
		reason_fix(reason),
	)
}

reason_fix(reason) := {"fix": sprintf("Use %q.", [known])} if {
	some known in lib.reasons
	lower(known) == lower(reason)
} else := {"fix": sprintf("Upgrade Karpenter to %s or later before you use %s, or remove it.", [lib.introduced("budgetReasons", reason), reason])} if {
	lib.introduced("budgetReasons", reason)
} else := {}
