package karpgate.rules.ami_name_wildcard_production

import data.karpgate.testlib

terms(ts) := testlib.node_class({"amiSelectorTerms": ts})

test_question_mark_wildcard_name_in_production if {
	v := violation with input as {"object": terms([{"id": "ami-1"}, {"name": "my-ami-2024080?", "owner": "self"}]), "production": true}
	testlib.paths(v) == {"spec.amiSelectorTerms[1].name"}
}

test_star_is_left_to_kg109 if {
	count(violation) == 0 with input as {"object": terms([{"name": "my-ami-*"}, {"name": "my-ami-?-*"}]), "production": true}
}

test_exact_name_passes if {
	count(violation) == 0 with input as {"object": terms([{"name": "my-ami-2024", "owner": "self"}]), "production": true}
}

test_wildcard_outside_production_passes if {
	count(violation) == 0 with input as {"object": terms([{"name": "my-ami-?"}]), "production": false}
}
