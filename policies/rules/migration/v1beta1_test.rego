package karpgate.rules.migration_v1beta1

test_v1beta1_kinds_are_reported if {
	every api in ["karpenter.sh/v1beta1", "karpenter.k8s.aws/v1beta1"] {
		v := violation with input as {"object": {"apiVersion": api, "kind": "NodePool"}}
		{f.path | some f in v} == {"apiVersion"}
	}
}

test_v1_passes if {
	count(violation) == 0 with input as {"object": {"apiVersion": "karpenter.sh/v1", "kind": "NodePool"}}
}
