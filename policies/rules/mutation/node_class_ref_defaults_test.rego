package karpgate.rules.mutation_node_class_ref_defaults

import data.karpgate.testlib

pool_with_ref(ref) := json.patch(testlib.node_pool({}), [{"op": "replace", "path": "/spec/template/spec/nodeClassRef", "value": ref}])

on := {"mutations": {"nodeClassRefDefaults": true}}

test_name_only_gets_group_and_kind if {
	v := violation with input as {"object": pool_with_ref({"name": "default"})} with data.karpgate.config as on
	some f in v
	f.path == "spec.template.spec.nodeClassRef"
	f.msg == "karpgate set group: karpenter.k8s.aws and kind: EC2NodeClass, which v1 requires and the manifest left out"
	f.patch == [
		{"op": "add", "path": "/spec/template/spec/nodeClassRef/group", "value": "karpenter.k8s.aws"},
		{"op": "add", "path": "/spec/template/spec/nodeClassRef/kind", "value": "EC2NodeClass"},
	]
	json.patch(pool_with_ref({"name": "default"}), f.patch) == testlib.node_pool({})
}

test_only_the_missing_field_is_set if {
	some f in violation with input as {"object": pool_with_ref({"name": "default", "kind": "EC2NodeClass"})} with data.karpgate.config as on
	f.patch == [{"op": "add", "path": "/spec/template/spec/nodeClassRef/group", "value": "karpenter.k8s.aws"}]
}

test_other_providers_keep_their_kind if {
	count(violation) == 0 with input as {"object": pool_with_ref({"name": "default", "group": "karpenter.azure.com"})} with data.karpgate.config as on
}

test_switched_off if {
	count(violation) == 0 with input as {"object": pool_with_ref({"name": "default"})} with data.karpgate.config as {"mutations": {"nodeClassRefDefaults": false}}
}

test_v1beta1_is_left_to_conversion if {
	beta := json.patch(pool_with_ref({"name": "default"}), [{"op": "replace", "path": "/apiVersion", "value": "karpenter.sh/v1beta1"}])
	count(violation) == 0 with input as {"object": beta} with data.karpgate.config as on
}

test_complete_ref_is_untouched if {
	count(violation) == 0 with input as {"object": testlib.node_pool({})} with data.karpgate.config as on
}

# Another provider's kind never gets the AWS group: AKSNodeClass and
# KWOKNodeClass belong to karpenter.azure.com and karpenter.kwok.sh.
test_other_providers_kinds_keep_their_group if {
	count(violation) == 0 with input as {"object": pool_with_ref({"name": "default", "kind": "AKSNodeClass"})} with data.karpgate.config as on
	count(violation) == 0 with input as {"object": pool_with_ref({"name": "default", "kind": "KWOKNodeClass"})} with data.karpgate.config as on
	count(violation) == 0 with input as {"object": pool_with_ref({"name": "default", "group": "karpenter.kwok.sh"})} with data.karpgate.config as on
}
