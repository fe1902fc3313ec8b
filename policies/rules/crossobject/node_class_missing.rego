# METADATA
# title: NodePool references an EC2NodeClass missing from the input
# description: >-
#   Offline, karpgate sees only the files given. A NodePool whose EC2NodeClass
#   is not among them is either a typo (the NodePool never becomes ready) or
#   a class managed elsewhere. Only reported when the input holds
#   EC2NodeClasses at all: linting a lone NodePool file, with its classes
#   kept elsewhere, is normal in CI. An admission request has no other
#   objects, so at admission it runs only in the audit of stored objects,
#   which sees the whole cluster.
# custom:
#   id: KG501
#   noTwin: 'Cross-object: it needs the other objects of the input, which an admission request does not carry.'
#   severity: warn
#   kinds: [NodePool]
#   points: [ci, admission]
#   fix: Add the EC2NodeClass to the input, or fix the name in nodeClassRef.
package karpgate.rules.crossobject_node_class_missing

import data.karpgate.lib

violation contains {
	"msg": sprintf("EC2NodeClass %q is not in the input; it has %s", [name, concat(", ", sort(known))]),
	"path": concat(".", [lib.node_class_ref_path, "name"]),
} if {
	is_object(input.inventory)
	name := lib.node_class_ref.name
	is_string(name)
	object.get(lib.node_class_ref, "kind", "EC2NodeClass") == "EC2NodeClass"
	not input.inventory.objects.EC2NodeClass[name]
	known := object.keys(object.get(input.inventory.objects, "EC2NodeClass", {}))
	count(known) > 0
}
