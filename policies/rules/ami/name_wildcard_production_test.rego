package karpgate.rules.ami_name_wildcard_production

import data.karpgate.testlib

terms(ts) := testlib.node_class({"amiSelectorTerms": ts})

test_wildcard_name_in_production if {
	v := violation with input as {"object": terms([{"id": "ami-1"}, {"name": "my-ami-*", "owner": "self"}]), "production": true}
	testlib.paths(v) == {"spec.amiSelectorTerms[1].name"}
}

test_question_mark_is_a_wildcard_too if {
	count(violation) == 1 with input as {"object": terms([{"name": "my-ami-?"}]), "production": true}
}

test_exact_name_passes if {
	count(violation) == 0 with input as {"object": terms([{"name": "my-ami-2024", "owner": "self"}]), "production": true}
}

test_wildcard_outside_production_passes if {
	count(violation) == 0 with input as {"object": terms([{"name": "my-ami-*"}]), "production": false}
}
