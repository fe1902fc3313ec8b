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
