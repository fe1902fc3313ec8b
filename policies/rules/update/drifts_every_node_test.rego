package karpgate.rules.update_drifts_every_node

import data.karpgate.testlib

pool := json.patch(testlib.node_pool({}), [
	{"op": "add", "path": "/spec/template/metadata", "value": {"labels": {"team": "a"}}},
	{"op": "add", "path": "/spec/template/spec/taints", "value": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}]},
	{"op": "add", "path": "/spec/template/spec/requirements", "value": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]},
	{"op": "add", "path": "/spec/template/spec/expireAfter", "value": "720h"},
])

update(old, new) := {"operation": "UPDATE", "object": new, "oldObject": old}

test_template_label_change_drifts_every_node if {
	new := json.patch(pool, [{"op": "replace", "path": "/spec/template/metadata/labels/team", "value": "b"}])
	v := violation with input as update(pool, new)
	testlib.paths(v) == {"spec.template.metadata.labels"}
	some f in v
	f.msg == "this update changes spec.template.metadata.labels, which Karpenter hashes: every node of NodePool/default drifts and is replaced, as fast as its Drifted budgets allow"
}

test_several_fields_are_listed_in_order if {
	new := json.patch(pool, [
		{"op": "replace", "path": "/spec/template/spec/expireAfter", "value": "24h"},
		{"op": "add", "path": "/spec/template/spec/terminationGracePeriod", "value": "1h"},
	])
	some f in violation with input as update(pool, new)
	f.path == "spec.template.spec.expireAfter"
	contains(f.msg, "changes spec.template.spec.expireAfter and spec.template.spec.terminationGracePeriod,")
}

test_requirements_budgets_weight_and_reordered_taints_do_not_drift if {
	new := json.patch(pool, [
		{"op": "replace", "path": "/spec/template/spec/requirements/0/values", "value": ["on-demand"]},
		{"op": "replace", "path": "/spec/disruption", "value": {"budgets": [{"nodes": "0"}]}},
		{"op": "add", "path": "/spec/weight", "value": 10},
		{"op": "replace", "path": "/spec/template/spec/taints", "value": [pool.spec.template.spec.taints[1], pool.spec.template.spec.taints[0]]},
		{"op": "add", "path": "/spec/template/metadata/annotations", "value": {}},
	])
	count(violation) == 0 with input as update(pool, new)
}

test_create_is_not_an_update if {
	count(violation) == 0 with input as {"operation": "CREATE", "object": pool}
}

class := testlib.node_class({
	"amiSelectorTerms": [{"alias": "al2023@v20240807"}],
	"userData": "echo hi",
	"tags": {"team": "a"},
	"subnetSelectorTerms": [{"tags": {"a": "b"}}],
})

test_node_class_static_fields_drift if {
	new := json.patch(class, [
		{"op": "replace", "path": "/spec/tags/team", "value": "b"},
		{"op": "add", "path": "/spec/kubelet", "value": {"maxPods": 20}},
	])
	v := violation with input as update(class, new)
	some f in v
	f.path == "spec.kubelet"
	contains(f.msg, "changes spec.kubelet and spec.tags,")
}

test_node_class_selectors_do_not_drift_every_node if {
	new := json.patch(class, [{"op": "replace", "path": "/spec/subnetSelectorTerms", "value": [{"id": "subnet-1"}]}])
	count(violation) == 0 with input as update(class, new)
}

test_ami_family_counts_as_resolved if {
	same := json.patch(class, [{"op": "add", "path": "/spec/amiFamily", "value": "AL2023"}])
	count(violation) == 0 with input as update(class, same)
	other := json.patch(class, [{"op": "add", "path": "/spec/amiFamily", "value": "Bottlerocket"}])
	testlib.paths(violation) == {"spec.amiFamily"} with input as update(class, other)
}

test_alias_version_change_drifts_every_node if {
	new := json.patch(class, [{"op": "replace", "path": "/spec/amiSelectorTerms/0/alias", "value": "al2023@v20240910"}])
	some f in violation with input as update(class, new)
	f.path == "spec.amiSelectorTerms[0].alias"
	startswith(f.msg, `this update moves the AMI alias from "al2023@v20240807" to "al2023@v20240910"`)
}

test_switch_to_latest_is_left_to_kg602 if {
	new := json.patch(class, [{"op": "replace", "path": "/spec/amiSelectorTerms/0/alias", "value": "al2023@latest"}])
	count(violation) == 0 with input as update(class, new)
}

# Karpenter tags ipPrefixCount hash:"ignore" (v1.8+): changing it drifts
# nothing, whatever karpgate used to think.
test_ip_prefix_count_is_ignored_by_the_hash if {
	new := json.patch(class, [{"op": "add", "path": "/spec/ipPrefixCount", "value": 2}])
	count(violation) == 0 with input as update(class, new)
}

# The hash rules are the version judged's: a release whose hash read
# ipPrefixCount would drift every node on it.
test_hash_rules_come_from_the_version_judged if {
	new := json.patch(class, [{"op": "add", "path": "/spec/ipPrefixCount", "value": 2}])
	v := violation with input as update(class, new)
		with data.karpgate.karpenter.facts.code.ec2NodeClassHash as {"roots": ["spec"], "ignored": ["spec.subnetSelectorTerms", "spec.amiSelectorTerms"], "inputs": []}
	testlib.paths(v) == {"spec.ipPrefixCount"}
}
