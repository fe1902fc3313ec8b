package karpgate.rules.waivers_unknown_rule

import data.karpgate.testlib

annotated(annotations) := object.union(testlib.node_class({}), {"metadata": {"annotations": annotations}})

test_unknown_rule if {
	v := violation with input as {"object": annotated({"karpgate.io/waive-KG1O1": "typo", "karpgate.io/waive-KG101": "ok"})}
	testlib.paths(v) == {"metadata.annotations[karpgate.io/waive-KG1O1]"}
}

test_known_rules_pass if {
	count(violation) == 0 with input as {"object": annotated({"karpgate.io/waive-KG101": "ok", "team.io/other": ""})}
}
