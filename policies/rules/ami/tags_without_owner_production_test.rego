package karpgate.rules.ami_tags_without_owner_production

import data.karpgate.testlib

terms(ts) := testlib.node_class({"amiSelectorTerms": ts})

test_tags_without_owner_in_production if {
	v := violation with input as {"object": terms([{"tags": {"team": "a", "env": "prod"}}]), "production": true}
	testlib.paths(v) == {"spec.amiSelectorTerms[0].tags"}
	some f in v
	contains(f.msg, "selects by tags (env, team) without owner")
}

test_owner_makes_it_pass if {
	count(violation) == 0 with input as {"object": terms([{"tags": {"team": "a"}, "owner": "123456789012"}]), "production": true}
}

test_outside_production_passes if {
	count(violation) == 0 with input as {"object": terms([{"tags": {"team": "a"}}]), "production": false}
}
