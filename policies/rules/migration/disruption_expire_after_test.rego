package karpgate.rules.migration_disruption_expire_after

import data.karpgate.testlib

test_v1_disruption_expire_after if {
	v := violation with input as {"object": testlib.node_pool({"expireAfter": "168h"})}
	testlib.paths(v) == {"spec.disruption.expireAfter"}
	some f in v
	f.fix == "Move it to spec.template.spec.expireAfter: 168h"
}

test_v1beta1_is_where_it_belonged if {
	pool := object.union(testlib.node_pool({"expireAfter": "168h"}), {"apiVersion": "karpenter.sh/v1beta1"})
	count(violation) == 0 with input as {"object": pool}
}

test_template_expire_after_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({"consolidateAfter": "0s"})}
}
