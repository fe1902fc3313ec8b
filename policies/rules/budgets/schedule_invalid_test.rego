package karpgate.rules.budgets_schedule_invalid

import data.karpgate.testlib

test_wrap_around_range_from_the_docs if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "0", "schedule": "0 9 * * sat-sun", "duration": "24h"}])}
	testlib.paths(v) == {"spec.disruption.budgets[0].schedule"}
	some f in v
	contains(f.msg, "beginning of range (6) beyond end of range (0)")
	contains(f.msg, "Karpenter allows zero voluntary disruptions of this NodePool for every reason")
	f.fix == `Use "0 9 * * sat,sun".`
}

test_sunday_as_7 if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "1"}, {"nodes": "0", "schedule": "0 0 * * 7", "duration": "1h"}])}
	some f in v
	f.path == "spec.disruption.budgets[1].schedule"
	f.fix == `Use "0 0 * * 0".`
}

test_unknown_fix_falls_back_to_metadata if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "0", "schedule": "every day", "duration": "1h"}])}
	some f in v
	not f.fix
}

test_valid_schedules_pass if {
	every schedule in ["0 9 * * sat,sun", "@daily", "*/15 * * * *", "0 9 * * mon-fri"] {
		count(violation) == 0 with input as {"object": testlib.budgets([{"nodes": "0", "schedule": schedule, "duration": "1h"}])}
	}
}
