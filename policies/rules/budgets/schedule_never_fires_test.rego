package karpgate.rules.budgets_schedule_never_fires

import data.karpgate.testlib

check(budgets) := v if {
	v := violation with input as {"object": testlib.budgets(budgets)} with time.now_ns as testlib.now
}

test_thirtieth_of_february if {
	v := check([{"nodes": "2", "schedule": "0 0 30 2 *", "duration": "1h"}])
	testlib.paths(v) == {"spec.disruption.budgets[0].schedule"}
}

test_firing_schedule_passes if {
	count(check([{"nodes": "2", "schedule": "0 0 29 2 *", "duration": "1h"}])) == 0
}
