package karpgate.rules.ami_floating_production

import data.karpgate.testlib

terms(ts) := testlib.node_class({"amiSelectorTerms": ts})

prod(ts) := {"object": terms(ts), "production": true}

# The findings for production terms: a function, because every's body
# cannot use with.
found(ts) := v if {
	v := violation with input as prod(ts)
}

eks_recommended := "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"

test_floating_terms_are_reported if {
	every tc in [
		{"term": {"ssmParameter": eks_recommended}, "path": "spec.amiSelectorTerms[1].ssmParameter", "says": `("recommended")`},
		{"term": {"ssmParameter": "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/latest/image_id"}, "path": "spec.amiSelectorTerms[1].ssmParameter", "says": `("latest")`},
		{"term": {"ssmParameter": "/aws/service/canonical/ubuntu/eks/22.04/1.33/stable/current/amd64/hvm/ebs-gp2/ami-id"}, "path": "spec.amiSelectorTerms[1].ssmParameter", "says": `("current")`},
		{"term": {"ssmParameter": "/aws/service/ami-windows-latest/Windows_Server-2022-English-Full-EKS_Optimized-1.33/image_id"}, "path": "spec.amiSelectorTerms[1].ssmParameter", "says": `("ami-windows-latest")`},
		{"term": {"ssmParameter": "aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/Recommended/image_id"}, "path": "spec.amiSelectorTerms[1].ssmParameter", "says": `("Recommended")`},
		{"term": {"name": "amazon-eks-node-al2023-x86_64-standard-1.33-*"}, "path": "spec.amiSelectorTerms[1].name", "says": `has a *`},
		{"term": {"name": "amazon-eks-node-al2023-x86_64-standard-1.33-*", "owner": "amazon"}, "path": "spec.amiSelectorTerms[1].name", "says": `has a *`},
		{"term": {"tags": {"release": "2024*"}}, "path": "spec.amiSelectorTerms[1].tags[release]", "says": `selects by tags alone`},
		{"term": {"tags": {"release": "*"}, "owner": "self"}, "path": "spec.amiSelectorTerms[1].tags[release]", "says": `selects by tags alone`},
	] {
		v := found([{"id": "ami-0123456789abcdef0"}, tc.term])
		testlib.paths(v) == {tc.path}
		some f in v
		startswith(f.msg, "AMI selector term 1 floats: ")
		contains(f.msg, tc.says)
		endswith(f.msg, "every node of this production EC2NodeClass")
		startswith(f.fix, "Pin the AMI you tested: its id")
	}
}

test_pinned_terms_pass if {
	every term in [
		{"id": "ami-0123456789abcdef0"},
		{"alias": "al2023@v20240807"},
		{"name": "amazon-eks-node-al2023-x86_64-standard-1.33-v20250519", "owner": "amazon"},
		{"ssmParameter": "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20250519/image_id"},
		{"ssmParameter": "/aws/service/bottlerocket/aws-k8s-1.33/x86_64/1.39.1/image_id"},
		# The customer's own parameter moves only when they write it.
		{"ssmParameter": "/platform/ami/recommended/latest"},
		# Exact tag values on the customer's images: their release process.
		{"tags": {"release": "2024-08-07"}, "owner": "self"},
		# A term with a name is judged by its name, not by its tags.
		{"name": "my-ami-2024", "tags": {"team": "*"}},
	] {
		count(found([term])) == 0
	}
}

test_fix_names_the_versioned_parameter if {
	every tc in [
		{"p": eks_recommended, "fix": "amazon-eks-node-al2023-x86_64-standard-1.33-v20250519/image_id"},
		{"p": "/aws/service/bottlerocket/aws-k8s-1.33/arm64/latest/image_id", "fix": "aws-k8s-1.33/x86_64/1.39.1/image_id"},
		{"p": "/aws/service/canonical/ubuntu/eks/22.04/1.33/stable/current/amd64/hvm/ebs-gp2/ami-id", "fix": `names the tested release in place of "current"`},
	] {
		some f in found([{"ssmParameter": tc.p}])
		contains(f.fix, tc.fix)
	}
}

test_every_floating_field_of_a_term_is_reported if {
	v := violation with input as prod([{"tags": {"a": "x*", "b": "*"}}])
	testlib.paths(v) == {"spec.amiSelectorTerms[0].tags[a]", "spec.amiSelectorTerms[0].tags[b]"}
}

# Before Karpenter v1.4 an amiSelectorTerms entry has no ssmParameter: the
# API server refuses the field, and KG109 must not judge what it would select.
test_ssm_parameter_unknown_to_the_release_is_not_judged if {
	count(violation) == 0 with input as prod([{"ssmParameter": eks_recommended}])
		with data.karpgate.karpenter.facts.schema.amiSelectorTermFields as ["alias", "id", "name", "owner", "tags"]
}

# Karpenter lines whose facts state no EC2NodeClass fields (v1.1, v1.4,
# v1.5, v1.7: core only) do not exclude it: the term is judged.
test_ssm_parameter_judged_when_the_release_states_no_term_fields if {
	count(violation) == 1 with input as prod([{"ssmParameter": eks_recommended}])
		with data.karpgate.karpenter.facts.schema as {"budgetReasons": ["Underutilized", "Empty", "Drifted"]}
}

test_outside_production_passes if {
	count(violation) == 0 with input as {"object": terms([{"ssmParameter": eks_recommended}]), "production": false}
}
