package karpgate.rules.budgets_nodes_invalid

import data.karpgate.testlib

test_malformed_nodes if {
	every nodes in ["10 %", "101%", "-1", "ten", "1.5"] {
		v := violation with input as {"object": testlib.budgets([{"nodes": nodes}])}
		testlib.paths(v) == {"spec.disruption.budgets[0].nodes"}
	}
}

test_unquoted_number if {
	v := violation with input as {"object": testlib.budgets([{"nodes": 0}])}
	some f in v
	f.path == "spec.disruption.budgets[0].nodes"
	contains(f.msg, "must be a string, found number 0")
}

test_over_100_percent_gets_a_fix if {
	v := violation with input as {"object": testlib.budgets([{"nodes": "150%"}])}
	some f in v
	f.fix == `Use "100%".`
}

test_valid_nodes_pass if {
	every nodes in ["0", "5", "0%", "10%", "100%"] {
		count(violation) == 0 with input as {"object": testlib.budgets([{"nodes": nodes}])}
	}
}
