package karpgate.rules.update_selector_terms_changed

import data.karpgate.testlib

class := testlib.node_class({
	"amiSelectorTerms": [{"name": "my-ami-*", "owner": "self"}],
	"subnetSelectorTerms": [{"tags": {"a": "b"}}],
	"securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
})

update(old, new) := {"operation": "UPDATE", "object": new, "oldObject": old}

test_ami_subnet_and_group_terms_warn if {
	new := json.patch(class, [
		{"op": "replace", "path": "/spec/amiSelectorTerms", "value": [{"id": "ami-123"}]},
		{"op": "replace", "path": "/spec/subnetSelectorTerms", "value": [{"id": "subnet-1"}]},
		{"op": "replace", "path": "/spec/securityGroupSelectorTerms", "value": [{"id": "sg-1"}]},
	])
	v := violation with input as update(class, new)
	testlib.paths(v) == {"spec.amiSelectorTerms", "spec.subnetSelectorTerms", "spec.securityGroupSelectorTerms"}
	some f in v
	f.path == "spec.amiSelectorTerms"
	contains(f.msg, "drifts (AMIDrift) every node of EC2NodeClass/default whose own value it no longer selects")
}

test_reordered_terms_do_not_warn if {
	two := json.patch(class, [{"op": "replace", "path": "/spec/subnetSelectorTerms", "value": [{"id": "subnet-1"}, {"id": "subnet-2"}]}])
	swapped := json.patch(class, [{"op": "replace", "path": "/spec/subnetSelectorTerms", "value": [{"id": "subnet-2"}, {"id": "subnet-1"}]}])
	count(violation) == 0 with input as update(two, swapped)
}

test_alias_moves_are_left_to_kg601 if {
	old := json.patch(class, [{"op": "replace", "path": "/spec/amiSelectorTerms", "value": [{"alias": "al2023@v20240807"}]}])
	new := json.patch(class, [{"op": "replace", "path": "/spec/amiSelectorTerms", "value": [{"alias": "al2023@v20240901"}]}])
	count(violation) == 0 with input as update(old, new)
}

test_a_release_without_the_drift_reason_says_nothing if {
	new := json.patch(class, [{"op": "replace", "path": "/spec/subnetSelectorTerms", "value": [{"id": "subnet-1"}]}])
	count(violation) == 0 with input as update(class, new) with data.karpgate.karpenter.resolutionDrift as {"spec.amiSelectorTerms": "AMIDrift"}
}
