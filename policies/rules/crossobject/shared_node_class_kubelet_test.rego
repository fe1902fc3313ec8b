package karpgate.rules.crossobject_shared_node_class_kubelet

import data.karpgate.testlib

pool(name, kubelet) := json.patch(testlib.node_pool({}), [
	{"op": "replace", "path": "/metadata/name", "value": name},
	{"op": "add", "path": "/metadata/annotations", "value": {"compatibility.karpenter.sh/v1beta1-kubelet-conversion": json.marshal(kubelet)}},
])

beta_pool(name, kubelet) := json.patch(testlib.node_pool({}), [
	{"op": "replace", "path": "/apiVersion", "value": "karpenter.sh/v1beta1"},
	{"op": "replace", "path": "/metadata/name", "value": name},
	{"op": "add", "path": "/spec/template/spec/kubelet", "value": kubelet},
])

inventory(pools) := {
	"objects": {"NodePool": {p.metadata.name: p | some p in pools}},
	"nodePoolsByNodeClass": {"default": [p.metadata.name | some p in pools]},
}

test_different_kubelet_blocks if {
	a := pool("a", {"maxPods": 110})
	b := beta_pool("b", {"maxPods": 58})
	c := pool("c", {"maxPods": 110})
	v := violation with input as {"object": a, "inventory": inventory([a, b, c])}
	testlib.paths(v) == {"metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]"}
	some f in v
	startswith(f.msg, `NodePool b shares EC2NodeClass "default" with this NodePool but has different`)
	vb := violation with input as {"object": b, "inventory": inventory([a, b, c])}
	testlib.paths(vb) == {"spec.template.spec.kubelet"}
	some fb in vb
	startswith(fb.msg, `NodePools a and c share EC2NodeClass "default" with this NodePool but have different`)
}

test_same_kubelet_passes if {
	a := pool("a", {"maxPods": 110})
	b := beta_pool("b", {"maxPods": 110})
	count(violation) == 0 with input as {"object": a, "inventory": inventory([a, b])}
}

test_without_inventory_passes if {
	count(violation) == 0 with input as {"object": pool("a", {"maxPods": 110})}
}
