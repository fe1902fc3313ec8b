package karpgate.rules.schema_yaml11_boolean

import data.karpgate.testlib

test_reports_its_class if {
	v := violation with input as {"object": testlib.node_pool({}), "schema": [
		{"class": "yaml11Boolean", "path": "spec.x", "message": "yes is the boolean true", "fix": "quote it"},
		{"class": "type", "path": "spec.z", "message": "other class", "fix": ""},
	]}
	v == {{"msg": "yes is the boolean true", "path": "spec.x", "fix": "quote it"}}
}

test_quiet_without_schema_verdict if {
	count(violation) == 0 with input as {"object": testlib.node_pool({})}
}
