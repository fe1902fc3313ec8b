package karpgate.rules.migration_legacy_do_not_evict

import data.karpgate.testlib

test_template_and_object_annotations if {
	pool := object.union(testlib.node_pool({}), {
		"metadata": {"annotations": {"karpenter.sh/do-not-consolidate": "true"}},
		"spec": {"template": {"metadata": {"annotations": {"karpenter.sh/do-not-evict": "true"}}}},
	})
	v := violation with input as {"object": pool}
	testlib.paths(v) == {
		"metadata.annotations[karpenter.sh/do-not-consolidate]",
		"spec.template.metadata.annotations[karpenter.sh/do-not-evict]",
	}
}

test_do_not_disrupt_passes if {
	pool := object.union(testlib.node_pool({}), {"spec": {"template": {"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}}}}})
	count(violation) == 0 with input as {"object": pool}
}
