package karpgate.rules.ami_alias_family_mismatch

import data.karpgate.testlib

class(family, alias) := testlib.node_class({"amiFamily": family, "amiSelectorTerms": [{"alias": alias}]})

test_mismatch if {
	v := violation with input as {"object": class("AL2", "al2023@v20240807")}
	testlib.paths(v) == {"spec.amiFamily"}
	some f in v
	f.msg == `amiFamily "AL2" disagrees with alias "al2023@v20240807", which selects al2023 AMIs`
}

test_same_family_in_other_case_passes if {
	count(violation) == 0 with input as {"object": class("Bottlerocket", "bottlerocket@v1.20.3")}
}

test_no_amifamily_passes if {
	count(violation) == 0 with input as {"object": testlib.node_class({"amiSelectorTerms": [{"alias": "al2023@latest"}]})}
}

test_custom_family_with_alias_passes if {
	count(violation) == 0 with input as {"object": class("Custom", "al2023@v20240807")}
}
