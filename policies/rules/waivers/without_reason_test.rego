package karpgate.rules.waivers_without_reason

import data.karpgate.testlib

test_empty_and_blank_reasons if {
	v := violation with input as {"object": testlib.node_class({}), "waivers": [
		testlib.waiver("KG101", {"reason": ""}),
		testlib.waiver("KG102", {"reason": "", "until": "2027-02-01T00:00:00Z"}),
		testlib.waiver("KG103", {"reason": "tested nightly"}),
	]}
	testlib.paths(v) == {"metadata.annotations[karpgate.io/waive-KG101]", "metadata.annotations[karpgate.io/waive-KG102]"}
}

test_reasons_pass if {
	count(violation) == 0 with input as {"object": testlib.node_class({}), "waivers": [testlib.waiver("KG101", {"reason": "staging account"})]}
}

test_an_unreadable_expiry_is_kg004s if {
	count(violation) == 0 with input as {"object": testlib.node_class({}), "waivers": [testlib.waiver("KG101", {"reason": "", "untilProblem": "not a date"})]}
}
