package karpgate.rules.migration_node_class_ref_group_slash

import data.karpgate.testlib

test_api_version_as_group if {
	pool := json.patch(testlib.node_pool({}), [{"op": "replace", "path": "/spec/template/spec/nodeClassRef/group", "value": "karpenter.k8s.aws/v1"}])
	v := violation with input as {"object": pool}
	testlib.paths(v) == {"spec.template.spec.nodeClassRef.group"}
	some f in v
	f.fix == "Use group: karpenter.k8s.aws"
}

test_group_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({})}
}

test_non_string_group_passes if {
	every group in [null, 3, ["karpenter.k8s.aws/v1"]] {
		pool := json.patch(testlib.node_pool({}), [{"op": "replace", "path": "/spec/template/spec/nodeClassRef/group", "value": group}])
		count(violation) == 0 with input as {"object": pool}
	}
	pool := json.patch(testlib.node_pool({}), [{"op": "replace", "path": "/spec/template/spec/nodeClassRef", "value": "karpenter.k8s.aws/v1"}])
	count(violation) == 0 with input as {"object": pool}
}
