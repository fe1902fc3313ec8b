package karpgate.rules.ami_latest

import data.karpgate.testlib

alias_class(aliases) := testlib.node_class({"amiSelectorTerms": [{"alias": a} | some a in aliases]})

test_latest_outside_production_warns if {
	v := violation with input as {"object": alias_class(["bottlerocket@latest"]), "production": false}
	testlib.paths(v) == {"spec.amiSelectorTerms[0].alias"}
	some f in v
	f.fix == "Pin a version you have tested, such as bottlerocket@v1.20.3"
}

test_case_of_latest_does_not_matter if {
	count(violation) == 1 with input as {"object": alias_class(["al2023@Latest"]), "production": false}
}

test_production_is_left_to_kg101 if {
	count(violation) == 0 with input as {"object": alias_class(["al2023@latest"]), "production": true}
}

test_pinned_passes if {
	count(violation) == 0 with input as {"object": alias_class(["al2023@v20240807"]), "production": false}
}
