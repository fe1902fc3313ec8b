package karpgate.rules.budgets_duration_invalid

import data.karpgate.testlib

budget_with(duration) := testlib.budgets([{"nodes": "0", "schedule": "@daily", "duration": duration}])

test_seconds_and_days if {
	every duration in ["30s", "1h30m10s", "1d"] {
		v := violation with input as {"object": budget_with(duration)}
		testlib.paths(v) == {"spec.disruption.budgets[0].duration"}
	}
}

test_days_message_converts if {
	v := violation with input as {"object": budget_with("2d")}
	some f in v
	contains(f.msg, "write 48h")
}

test_valid_durations_pass if {
	every duration in ["8h", "90m", "1h30m", "8h0m0s"] {
		count(violation) == 0 with input as {"object": budget_with(duration)}
	}
}
