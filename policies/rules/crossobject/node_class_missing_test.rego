package karpgate.rules.crossobject_node_class_missing

import data.karpgate.testlib

inventory(classes) := {"objects": {"EC2NodeClass": {name: {} | some name in classes}}, "nodePoolsByNodeClass": {}}

test_missing_class_names_the_ones_present if {
	v := violation with input as {"object": testlib.node_pool({}), "inventory": inventory(["gpu", "arm"])}
	testlib.paths(v) == {"spec.template.spec.nodeClassRef.name"}
	some f in v
	f.msg == `EC2NodeClass "default" is not in the input; it has arm, gpu`
}

test_input_without_classes_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({}), "inventory": inventory([])}
}

test_present_class_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({}), "inventory": inventory(["default"])}
}

test_admission_without_inventory_passes if {
	count(violation) == 0 with input as {"object": testlib.node_pool({})}
}
