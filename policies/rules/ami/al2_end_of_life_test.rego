package karpgate.rules.ami_al2_end_of_life

import data.karpgate.testlib

al2_family := testlib.node_class({"amiFamily": "AL2", "amiSelectorTerms": [{"id": "ami-1"}]})

al2_alias := testlib.node_class({"amiSelectorTerms": [{"alias": "al2@v20240807"}]})

test_al2_family_on_1_33 if {
	v := violation with input as {"object": al2_family} with data.karpgate.config.kubernetesVersion as "1.33"
	testlib.paths(v) == {"spec.amiFamily"}
}

test_al2_alias_on_1_34 if {
	v := violation with input as {"object": al2_alias} with data.karpgate.config.kubernetesVersion as "v1.34"
	testlib.paths(v) == {"spec.amiSelectorTerms[0].alias"}
}

test_al2_on_1_32_passes if {
	count(violation) == 0 with input as {"object": al2_family} with data.karpgate.config.kubernetesVersion as "1.32"
}

test_without_target_version_passes if {
	count(violation) == 0 with input as {"object": al2_family} with data.karpgate.config as {}
}

test_al2023_on_1_33_passes if {
	count(violation) == 0 with input as {"object": testlib.node_class({"amiSelectorTerms": [{"alias": "al2023@latest"}]})}
		with data.karpgate.config.kubernetesVersion as "1.33"
}
