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

# karpgate's hold (rollout guard or freeze) is vouched for by its record:
# the analysis leaves that budget out, so KG301 judges the user's budgets.
hold := {"nodes": "0", "reasons": ["Drifted"]}

held(budgets, record) := object.union(testlib.budgets(budgets), {"metadata": {"annotations": {"karpgate.io/rollout-guard": json.marshal(record)}}})

record(budget, index) := {"budget": budget, "index": index, "since": "2024-06-05T11:00:00Z", "reason": "test", "by": "freeze"}

check_held(budgets, rec) := v if {
	v := violation with input as {"object": held(budgets, rec)} with time.now_ns as testlib.now
}

test_karpgate_hold_with_its_record_passes if {
	count(check_held([{"nodes": "10%"}, hold], record(hold, 1))) == 0
}

test_user_zero_budget_beside_karpgate_hold_fires if {
	v := check_held([{"nodes": "0"}, hold], record(hold, 1))
	testlib.paths(v) == {"spec.disruption.budgets[0]"}
}

test_record_at_another_index_fires if {
	v := check_held([hold, {"nodes": "10%"}], record(hold, 1))
	testlib.paths(v) == {"spec.disruption.budgets[0]"}
}

test_record_of_another_budget_fires if {
	v := check_held([{"nodes": "10%"}, {"nodes": "0"}], record({"nodes": "0"}, 1))
	testlib.paths(v) == {"spec.disruption.budgets[1]"}
}

test_unreadable_record_fires if {
	v := violation with input as {"object": object.union(testlib.budgets([hold]), {"metadata": {"annotations": {"karpgate.io/rollout-guard": "{not json"}}})}
		with time.now_ns as testlib.now
	testlib.paths(v) == {"spec.disruption.budgets[0]"}
}
