package karpgate.rules.waivers_without_reason

import data.karpgate.testlib

annotated(annotations) := object.union(testlib.node_class({}), {"metadata": {"annotations": annotations}})

test_empty_and_blank_reasons if {
	v := violation with input as {"object": annotated({"karpgate.io/waive-KG101": "", "karpgate.io/waive-KG102": "  ", "karpgate.io/waive-KG103": "tested nightly"})}
	testlib.paths(v) == {"metadata.annotations[karpgate.io/waive-KG101]", "metadata.annotations[karpgate.io/waive-KG102]"}
}

test_reasons_pass if {
	count(violation) == 0 with input as {"object": annotated({"karpgate.io/waive-KG101": "staging account"})}
}
