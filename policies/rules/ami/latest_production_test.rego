package karpgate.rules.ami_latest_production

import data.karpgate.testlib

alias_class(alias) := testlib.node_class({"amiSelectorTerms": [{"alias": alias}]})

test_latest_in_production_is_reported if {
	v := violation with input as {"object": alias_class("al2023@latest"), "production": true}
	testlib.paths(v) == {"spec.amiSelectorTerms[0].alias"}
	some f in v
	contains(f.msg, `"al2023@latest" follows every AMI release`)
	f.fix == "Pin a version you have tested, such as al2023@v20240807"
}

test_fix_names_approved_versions if {
	v := violation with input as {"object": alias_class("bottlerocket@latest"), "production": true}
		with data.karpgate.config.amis.approvedAliasVersions as {"bottlerocket": ["v1.20.3", "v1.21.0"]}
	some f in v
	f.fix == "Pin an approved version: bottlerocket@v1.20.3, bottlerocket@v1.21.0"
}

test_windows_fix_says_select_by_id if {
	v := violation with input as {"object": alias_class("windows2022@latest"), "production": true}
	some f in v
	startswith(f.fix, "windows2022 aliases can only be @latest")
}

test_pinned_alias_passes if {
	count(violation) == 0 with input as {"object": alias_class("al2023@v20240807"), "production": true}
}

test_outside_production_passes if {
	count(violation) == 0 with input as {"object": alias_class("al2023@latest"), "production": false}
}
