package karpgate.rules.ami_alias_not_approved

import data.karpgate.testlib

approved := {"al2023": ["v20240807"], "bottlerocket": ["v1.20.3"]}

alias_class(alias) := testlib.node_class({"amiSelectorTerms": [{"alias": alias}]})

test_unapproved_version_in_production if {
	v := violation with input as {"object": alias_class("al2023@v20240701"), "production": true}
		with data.karpgate.config.amis.approvedAliasVersions as approved
	testlib.paths(v) == {"spec.amiSelectorTerms[0].alias"}
	some f in v
	endswith(f.msg, "approved: v20240807")
}

test_approved_versions_pass if {
	every alias in ["al2023@v20240807", "bottlerocket@v1.20.3"] {
		count(violation) == 0 with input as {"object": alias_class(alias), "production": true}
			with data.karpgate.config.amis.approvedAliasVersions as approved
	}
}

test_family_without_list_passes if {
	count(violation) == 0 with input as {"object": alias_class("al2@v20240807"), "production": true}
		with data.karpgate.config.amis.approvedAliasVersions as approved
}

test_latest_is_left_to_kg101 if {
	count(violation) == 0 with input as {"object": alias_class("al2023@latest"), "production": true}
		with data.karpgate.config.amis.approvedAliasVersions as approved
}

test_outside_production_passes if {
	count(violation) == 0 with input as {"object": alias_class("al2023@v20240701"), "production": false}
		with data.karpgate.config.amis.approvedAliasVersions as approved
}
