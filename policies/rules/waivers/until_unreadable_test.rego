package karpgate.rules.waivers_until_unreadable

import data.karpgate.testlib

test_unreadable if {
	v := violation with input as {"object": testlib.node_class({}), "waivers": [
		testlib.waiver("KG101", {"reason": "x", "untilProblem": "\"31/01/2027\" is not a date"}),
		testlib.waiver("KG102", {"reason": "x", "until": "2027-02-01T00:00:00Z"}),
	]}
	v == {{"msg": "waiver for KG101 is ignored: \"31/01/2027\" is not a date", "path": "metadata.annotations[karpgate.io/waive-KG101]"}}
}
