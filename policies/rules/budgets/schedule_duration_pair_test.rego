package karpgate.rules.budgets_schedule_duration_pair

import data.karpgate.testlib

test_schedule_without_duration if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "0", "schedule": "@daily"}])}
	testlib.paths(v) == {"spec.disruption.budgets[0].duration"}
}

test_duration_without_schedule if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "0", "duration": "1h"}])}
	testlib.paths(v) == {"spec.disruption.budgets[0].schedule"}
}

test_both_or_neither_pass if {
	count(violation) == 0 with input as {"object": testlib.budgets([{"nodes": "0", "schedule": "@daily", "duration": "1h"}, {"nodes": "10%"}])}
}
