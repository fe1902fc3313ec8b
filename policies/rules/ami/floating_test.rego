package karpgate.rules.ami_floating

import data.karpgate.testlib

terms(ts) := testlib.node_class({"amiSelectorTerms": ts})

test_floating_outside_production_warns if {
	v := violation with input as {"object": terms([{"ssmParameter": "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/latest/image_id"}]), "production": false}
	testlib.paths(v) == {"spec.amiSelectorTerms[0].ssmParameter"}
	some f in v
	endswith(f.msg, "; each release drifts and replaces every node of this EC2NodeClass")
	contains(f.fix, "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/1.39.1/image_id")
}

test_production_is_kg109s if {
	count(violation) == 0 with input as {"object": terms([{"name": "my-ami-*"}]), "production": true}
}

test_pinned_outside_production_passes if {
	count(violation) == 0 with input as {"object": terms([{"name": "my-ami-2024", "owner": "self"}]), "production": false}
}
