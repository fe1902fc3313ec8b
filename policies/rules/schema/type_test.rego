package karpgate.rules.schema_type

import data.karpgate.testlib

test_reports_its_class if {
	v := violation with input as {"object": testlib.node_pool({}), "schema": [
		{"class": "type", "path": "spec.x", "message": "refused", "fix": "do y"},
		{"class": "required", "path": "spec.z", "message": "other class", "fix": ""},
	]}
	v == {{"msg": "refused", "path": "spec.x", "fix": "do y"}}
}

test_quiet_without_schema_verdict if {
	count(violation) == 0 with input as {"object": testlib.node_pool({})}
}
