package karpgate.rules.budgets_reason_invalid

import data.karpgate.testlib

test_wrong_case_gets_a_fix if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "0", "reasons": ["Empty", "drifted"]}])}
	testlib.paths(v) == {"spec.disruption.budgets[0].reasons[1]"}
	some f in v
	f.fix == `Use "Drifted".`
}

test_unknown_reason if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "0", "reasons": ["Expired"]}])}
	some f in v
	contains(f.msg, `"Expired" is not a disruption reason`)
}

test_reasons_on_v1beta1 if {
	pool := object.union(testlib.budgets([{"nodes": "0", "reasons": ["Drifted"]}]), {"apiVersion": "karpenter.sh/v1beta1"})
	v := violation with input as {"object": pool}
	testlib.paths(v) == {"spec.disruption.budgets[0].reasons"}
}

test_known_reasons_pass if {
	count(violation) == 0 with input as {"object": testlib.budgets([{"nodes": "0", "reasons": ["Underutilized", "Empty", "Drifted"]}])}
}

test_unhealthy_passes_on_v1_15 if {
	count(violation) == 0 with input as {"object": testlib.budgets([{"nodes": "1", "reasons": ["Underutilized", "Empty", "Drifted", "Unhealthy"]}])}
		with data.karpgate.karpenter.version as "v1.15.1"
		with data.karpgate.karpenter.facts.schema.budgetReasons as ["Underutilized", "Empty", "Drifted", "Unhealthy"]
}

test_unhealthy_denied_before_v1_15 if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "1", "reasons": ["Drifted", "Unhealthy"]}])}
		with data.karpgate.karpenter.version as "v1.14.3"
		with data.karpgate.karpenter.facts.schema.budgetReasons as ["Underutilized", "Empty", "Drifted"]
	testlib.paths(v) == {"spec.disruption.budgets[0].reasons[1]"}
	some f in v
	contains(f.msg, `"Unhealthy" is not a disruption reason of Karpenter v1.14.3`)
	contains(f.msg, "Unhealthy is new in Karpenter v1.15")
	f.fix == "Upgrade Karpenter to v1.15 or later before you use Unhealthy, or remove it."
}
