package karpgate.rules.waivers_expired

import data.karpgate.testlib

test_expired if {
	v := violation with input as {"object": testlib.node_class({}), "waivers": [
		testlib.waiver("KG101", {"reason": "migrating", "until": "2024-06-01T00:00:00Z", "expired": true}),
		testlib.waiver("KG102", {"reason": "migrating", "until": "2027-02-01T00:00:00Z"}),
	]}
	v == {{"msg": "waiver for KG101 expired at 2024-06-01T00:00:00Z, so KG101 applies again", "path": "metadata.annotations[karpgate.io/waive-KG101]"}}
}

test_no_expiry_passes if {
	count(violation) == 0 with input as {"object": testlib.node_class({}), "waivers": [testlib.waiver("KG101", {"reason": "forever"})]}
}
