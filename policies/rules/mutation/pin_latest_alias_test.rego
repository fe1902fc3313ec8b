package karpgate.rules.mutation_pin_latest_alias

import data.karpgate.testlib

alias_class(alias) := testlib.node_class({"amiSelectorTerms": [{"alias": alias}]})

pinning := {"mutations": {"pinLatestAlias": true}, "amis": {"approvedAliasVersions": {"al2023": ["v20240807", "v20240701"]}}}

test_production_latest_is_pinned_to_the_first_approved_version if {
	v := violation with input as {"object": alias_class("al2023@latest"), "production": true} with data.karpgate.config as pinning
	testlib.paths(v) == {"spec.amiSelectorTerms[0].alias"}
	some f in v
	f.msg == `karpgate pinned "al2023@latest" to "al2023@v20240807", the first approved version for al2023, so that AMI releases do not replace production nodes unplanned`
	json.patch(alias_class("al2023@latest"), f.patch) == alias_class("al2023@v20240807")
}

test_outside_production_nothing_is_pinned if {
	count(violation) == 0 with input as {"object": alias_class("al2023@latest"), "production": false} with data.karpgate.config as pinning
}

test_family_without_approved_versions_is_left_alone if {
	count(violation) == 0 with input as {"object": alias_class("bottlerocket@latest"), "production": true} with data.karpgate.config as pinning
}

test_off_by_default if {
	count(violation) == 0 with input as {"object": alias_class("al2023@latest"), "production": true} with data.karpgate.config as object.union(pinning, {"mutations": {"pinLatestAlias": false}})
}

test_pinned_alias_is_left_alone if {
	count(violation) == 0 with input as {"object": alias_class("al2023@v20240701"), "production": true} with data.karpgate.config as pinning
}
