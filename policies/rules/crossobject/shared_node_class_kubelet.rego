# METADATA
# title: NodePools sharing an EC2NodeClass disagree on kubelet
# description: >-
#   In v1 the kubelet settings live on the EC2NodeClass, so every NodePool
#   that shares one gets the same settings. NodePools whose v1beta1 kubelet
#   blocks (or v1 kubelet compatibility annotations) differ cannot all keep
#   theirs: migrating changes the nodes of at least one of them. At
#   admission it runs only in the audit of stored objects, which sees every
#   NodePool.
# custom:
#   id: KG502
#   noTwin: 'Cross-object: it needs the other objects of the input, which an admission request does not carry.'
#   severity: warn
#   kinds: [NodePool]
#   points: [ci, admission]
#   fix: Give each kubelet configuration its own EC2NodeClass, or agree on one and set it in the EC2NodeClass's spec.kubelet.
package karpgate.rules.crossobject_shared_node_class_kubelet

import data.karpgate.lib

violation contains {
	"msg": sprintf("%s EC2NodeClass %q with this NodePool but %s different kubelet settings; in v1 one EC2NodeClass holds one kubelet configuration", [sharers(others), class, have(others)]),
	"path": lib.legacy_kubelet_path(input.object),
} if {
	class := lib.node_class_ref.name
	is_string(class)
	mine := lib.legacy_kubelet(input.object)
	others := {other |
		some other in input.inventory.nodePoolsByNodeClass[class]
		other != lib.name
		lib.legacy_kubelet(input.inventory.objects.NodePool[other]) != mine
	}
	count(others) > 0
}

sharers(others) := sprintf("NodePool %s shares", [concat("", others)]) if count(others) == 1

sharers(others) := sprintf("NodePools %s share", [lib.and_list(sort(others))]) if count(others) > 1

have(others) := "has" if count(others) == 1

have(others) := "have" if count(others) > 1
