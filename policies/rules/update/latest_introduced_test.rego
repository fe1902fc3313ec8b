package karpgate.rules.update_latest_introduced

import data.karpgate.testlib

alias_class(alias) := testlib.node_class({"amiSelectorTerms": [{"alias": alias}]})

test_pinned_to_latest_warns if {
	v := violation with input as {"operation": "UPDATE", "oldObject": alias_class("al2023@v20240807"), "object": alias_class("al2023@latest")}
	testlib.paths(v) == {"spec.amiSelectorTerms[0].alias"}
	some f in v
	startswith(f.msg, `this update switches the AMI selection to "al2023@latest": every node of EC2NodeClass/default drifts now`)
	f.fix == "Pin a version you have tested, such as al2023@v20240807"
}

test_from_selector_terms_to_latest_warns if {
	old := testlib.node_class({"amiSelectorTerms": [{"id": "ami-123"}]})
	count(violation) == 1 with input as {"operation": "UPDATE", "oldObject": old, "object": alias_class("bottlerocket@latest")}
}

test_already_latest_is_not_new if {
	count(violation) == 0 with input as {"operation": "UPDATE", "oldObject": alias_class("al2@latest"), "object": alias_class("al2023@latest")}
}

test_create_is_left_to_kg101_and_kg102 if {
	count(violation) == 0 with input as {"operation": "CREATE", "object": alias_class("al2023@latest")}
}
