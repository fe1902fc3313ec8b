package karpgate.rules.budgets_drift_never_allowed

import data.karpgate.testlib

check(budgets) := v if {
	v := violation with input as {"object": testlib.budgets(budgets)} with time.now_ns as testlib.now
}

test_zero_for_every_reason if {
	v := check([{"nodes": "5"}, {"nodes": "0"}])
	testlib.paths(v) == {"spec.disruption.budgets[1]"}
}

test_zero_percent_for_drifted if {
	v := check([{"nodes": "0%", "reasons": ["Drifted"]}])
	testlib.paths(v) == {"spec.disruption.budgets[0]"}
}

test_window_longer_than_its_period_never_closes if {
	v := check([{"nodes": "0", "schedule": "@hourly", "duration": "2h", "reasons": ["Drifted"]}])
	testlib.paths(v) == {"spec.disruption.budgets[0]"}
}

test_scheduled_zero_passes if {
	count(check([{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}])) == 0
}

test_zero_for_other_reasons_passes if {
	count(check([{"nodes": "0", "reasons": ["Underutilized", "Empty"]}])) == 0
}
