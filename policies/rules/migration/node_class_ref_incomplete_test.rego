package karpgate.rules.migration_node_class_ref_incomplete

import data.karpgate.testlib

pool_with_ref(ref) := json.patch(testlib.node_pool({}), [{"op": "replace", "path": "/spec/template/spec/nodeClassRef", "value": ref}])

test_name_only if {
	v := violation with input as {"object": pool_with_ref({"name": "default"})}
	some f in v
	f.path == "spec.template.spec.nodeClassRef"
	f.msg == "spec.template.spec.nodeClassRef has no group or kind, which v1 requires"
	f.fix == "Add group: karpenter.k8s.aws and kind: EC2NodeClass"
}

test_kind_missing if {
	v := violation with input as {"object": pool_with_ref({"name": "default", "group": "karpenter.k8s.aws"})}
	some f in v
	f.fix == "Add kind: EC2NodeClass"
}

test_node_claim_ref if {
	claim := {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "spec": {"nodeClassRef": {"name": "x", "kind": "EC2NodeClass"}}}
	v := violation with input as {"object": claim}
	testlib.paths(v) == {"spec.nodeClassRef"}
}

test_complete_ref_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({})}
}

# Only an object is judged: a missing, null or string reference is the
# schema's to refuse (KG801), not a reference lacking group and kind.
test_non_object_ref_passes if {
	every ref in [null, "default", ["default"]] {
		count(violation) == 0 with input as {"object": pool_with_ref(ref)}
	}
	pool := json.patch(testlib.node_pool({}), [{"op": "remove", "path": "/spec/template/spec/nodeClassRef"}])
	count(violation) == 0 with input as {"object": pool}
}

test_non_string_kind_is_missing if {
	v := violation with input as {"object": pool_with_ref({"name": "default", "group": "karpenter.k8s.aws", "kind": 3})}
	some f in v
	f.fix == "Add kind: EC2NodeClass"
}
