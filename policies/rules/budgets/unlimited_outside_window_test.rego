package karpgate.rules.budgets_unlimited_outside_window

import data.karpgate.testlib

check(budgets) := v if {
	v := violation with input as {"object": testlib.budgets(budgets)} with time.now_ns as testlib.now
}

test_docs_example_weekday_evenings if {
	v := check([{"nodes": "0", "schedule": "0 17 * * mon-fri", "duration": "16h", "reasons": ["Drifted"]}])
	testlib.paths(v) == {"spec.disruption.budgets[0]"}
	some f in v
	f.msg == "Drifted disruptions are unlimited whenever no budget covering them is active, every week: Tue–Fri 09:00–17:00 and Sat 09:00–Mon 17:00 (UTC)"
}

test_reasons_with_the_same_windows_share_a_finding if {
	v := check([
		{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": ["Drifted", "Underutilized"]},
		{"nodes": "100%", "reasons": ["Empty"]},
	])
	count(v) == 1
	some f in v
	startswith(f.msg, "Underutilized and Drifted disruptions are unlimited")
	contains(f.msg, "Mon–Thu 17:00–09:00 next day and Fri 17:00–Mon 09:00")
}

test_allowance_window_reads_as_only_here if {
	v := check([{"nodes": "1", "schedule": "0 2 * * *", "duration": "2h"}])
	some f in v
	startswith(f.msg, "Underutilized, Empty, Drifted and Unhealthy disruptions are unlimited")
	contains(f.msg, "every week: Mon–Sun 04:00–02:00 next day")
}

test_always_active_cover_passes if {
	count(check([{"nodes": "1", "schedule": "0 2 * * *", "duration": "2h"}, {"nodes": "10%"}])) == 0
}

test_no_schedule_passes if {
	count(check([{"nodes": "10%"}])) == 0
}
