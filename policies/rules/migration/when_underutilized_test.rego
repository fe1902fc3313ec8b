package karpgate.rules.migration_when_underutilized

import data.karpgate.testlib

test_when_underutilized_in_v1 if {
	v := violation with input as {"object": testlib.node_pool({"consolidationPolicy": "WhenUnderutilized"})}
	testlib.paths(v) == {"spec.disruption.consolidationPolicy"}
}

test_v1_value_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({"consolidationPolicy": "WhenEmptyOrUnderutilized"})}
}

test_v1beta1_passes if {
	pool := object.union(testlib.node_pool({"consolidationPolicy": "WhenUnderutilized"}), {"apiVersion": "karpenter.sh/v1beta1"})
	count(violation) == 0 with input as {"object": pool}
}
