package karpgate.rules.waivers_approvers

import data.karpgate.testlib

named := {"users": ["alice"], "groups": ["platform"]}

request(user, groups, changed) := {
	"object": testlib.node_class({}),
	"userInfo": {"username": user, "groups": groups},
	"waivers": [testlib.waiver("KG101", {"reason": "x", "changed": changed})],
}

test_others_may_not if {
	v := violation with input as request("mallory", ["system:authenticated"], true)
		with data.karpgate.config.waivers.approvers as named
	v == {{"msg": "mallory may not add or change the waiver for KG101: karpgate.yaml names who may (waivers.approvers)", "path": "metadata.annotations[karpgate.io/waive-KG101]"}}
}

test_approvers_by_name_or_group_may if {
	count(violation) == 0 with input as request("alice", [], true) with data.karpgate.config.waivers.approvers as named
	count(violation) == 0 with input as request("bob", ["platform"], true) with data.karpgate.config.waivers.approvers as named
}

test_unchanged_waivers_are_not_judged if {
	count(violation) == 0 with input as request("mallory", [], false) with data.karpgate.config.waivers.approvers as named
}

test_nobody_named_means_anyone if {
	count(violation) == 0 with input as request("mallory", [], true) with data.karpgate.config.waivers.approvers as {"users": [], "groups": []}
}

test_no_user_no_finding if {
	count(violation) == 0 with input as {"object": testlib.node_class({}), "waivers": [testlib.waiver("KG101", {"reason": "x", "changed": true})]}
		with data.karpgate.config.waivers.approvers as named
}
