package karpgate.rules.ami_ubuntu

import data.karpgate.testlib

test_ubuntu_is_reported if {
	v := violation with input as {"object": testlib.node_class({"amiFamily": "Ubuntu"})}
	testlib.paths(v) == {"spec.amiFamily"}
}

test_other_families_pass if {
	every family in ["AL2023", "Bottlerocket", "Custom"] {
		count(violation) == 0 with input as {"object": testlib.node_class({"amiFamily": family})}
	}
}
