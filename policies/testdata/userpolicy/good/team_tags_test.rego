package karpgate.rules.acme_team_tag

test_missing_team if {
	count(violation) == 1 with input as {"object": {"spec": {"tags": {}}}}
}

test_known_team if {
	count(violation) == 0 with input as {"object": {"spec": {"tags": {"team": "payments"}}}}
}

test_custom_builtin_is_available if {
	problems := karpgate.budgets.problems({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": {"disruption": {"budgets": [{"nodes": "0", "schedule": "0 9 * * sat-sun", "duration": "24h"}]}}})
	problems[0].kind == "schedule"
}
