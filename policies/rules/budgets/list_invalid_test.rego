package karpgate.rules.budgets_list_invalid

import data.karpgate.testlib

test_budgets_not_a_list if {
	v := violation with input as {"object": testlib.node_pool({"budgets": {"nodes": "0"}})}
	testlib.paths(v) == {"spec.disruption.budgets"}
}

test_budget_not_an_object if {
	v := violation with input as {"object": testlib.budgets(["0"])}
	testlib.paths(v) == {"spec.disruption.budgets[0]"}
}

test_too_many_budgets if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "1"} | some _ in numbers.range(1, 51)])}
	some f in v
	contains(f.msg, "at most 50")
}

test_a_list_passes if {
	count(violation) == 0 with input as {"object": testlib.budgets([{"nodes": "1"}])}
}
