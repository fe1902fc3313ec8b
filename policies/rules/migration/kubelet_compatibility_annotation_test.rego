package karpgate.rules.migration_kubelet_compatibility_annotation

import data.karpgate.testlib

test_annotation_is_reported if {
	pool := object.union(testlib.node_pool({}), {"metadata": {"annotations": {"compatibility.karpenter.sh/v1beta1-kubelet-conversion": `{"maxPods":110}`}}})
	v := violation with input as {"object": pool}
	testlib.paths(v) == {"metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]"}
}

test_other_annotations_pass if {
	pool := object.union(testlib.node_pool({}), {"metadata": {"annotations": {"compatibility.karpenter.sh/v1beta1-nodeclass-reference": "null"}}})
	count(violation) == 0 with input as {"object": pool}
}
