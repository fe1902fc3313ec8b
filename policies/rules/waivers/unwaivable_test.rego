package karpgate.rules.waivers_unwaivable

import data.karpgate.testlib

test_unwaivable if {
	v := violation with input as {"object": testlib.node_class({}), "waivers": [testlib.waiver("KG101", {"reason": "please"}), testlib.waiver("KG102", {"reason": "ok"})]}
		with data.karpgate.engine.unwaivable as {"KG101": "karpgate.yaml sets rules.KG101.waivable to false"}
	v == {{"msg": "KG101 cannot be waived (karpgate.yaml sets rules.KG101.waivable to false), so this waiver waives nothing", "path": "metadata.annotations[karpgate.io/waive-KG101]"}}
}
