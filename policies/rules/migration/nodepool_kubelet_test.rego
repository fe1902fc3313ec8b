package karpgate.rules.migration_nodepool_kubelet

import data.karpgate.testlib

test_kubelet_on_v1 if {
	pool := object.union(testlib.node_pool({}), {"spec": {"template": {"spec": {"kubelet": {"maxPods": 110}}}}})
	v := violation with input as {"object": pool}
	testlib.paths(v) == {"spec.template.spec.kubelet"}
}

test_kubelet_on_v1beta1_passes if {
	pool := object.union(testlib.node_pool({}), {"apiVersion": "karpenter.sh/v1beta1", "spec": {"template": {"spec": {"kubelet": {"maxPods": 110}}}}})
	count(violation) == 0 with input as {"object": pool}
}

# The field written at all is the finding, even empty or null: the API
# server prunes it either way.
test_null_or_empty_kubelet_on_v1 if {
	every kubelet in [null, {}] {
		pool := object.union(testlib.node_pool({}), {"spec": {"template": {"spec": {"kubelet": kubelet}}}})
		v := violation with input as {"object": pool}
		testlib.paths(v) == {"spec.template.spec.kubelet"}
	}
}

test_no_kubelet_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({})}
	pool := object.union(testlib.node_pool({}), {"spec": {"template": {"spec": "x"}}})
	count(violation) == 0 with input as {"object": pool}
}
