package karpgate.rules.budgets_never_active

import data.karpgate.testlib

check(budgets) := v if {
	v := violation with input as {"object": testlib.budgets(budgets)} with time.now_ns as testlib.now
}

test_zero_duration if {
	v := check([{"nodes": "10%"}, {"nodes": "0", "schedule": "@daily", "duration": "0m"}])
	testlib.paths(v) == {"spec.disruption.budgets[1]"}
}

test_rare_but_real_window_passes if {
	count(check([{"nodes": "0", "schedule": "0 0 1 1 *", "duration": "1h"}])) == 0
}

test_missing_duration_is_left_to_kg203 if {
	count(check([{"nodes": "0", "schedule": "@daily"}])) == 0
}
