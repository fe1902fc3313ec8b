package karpgate.rules.update_production_removed

import data.karpgate.testlib

config := {"production": {"values": ["prod", "production"], "labels": ["karpgate.io/environment"], "tags": ["environment"]}}

prod_class := testlib.labelled_node_class({"karpgate.io/environment": "production"}, {"tags": {"environment": "prod"}})

update(old, new) := {"operation": "UPDATE", "oldObject": old, "object": new, "oldObjectProduction": true, "objectProduction": false}

test_removing_the_label_and_the_tag_is_reported_at_each if {
	new := testlib.node_class({"tags": {}})
	v := violation with input as update(prod_class, new) with data.karpgate.config as config
	testlib.paths(v) == {"metadata.labels[karpgate.io/environment]", "spec.tags[environment]"}
	some f in v
	f.path == "metadata.labels[karpgate.io/environment]"
	f.msg == `this update takes EC2NodeClass/default out of production (label karpgate.io/environment was "production", now removed): every production rule would stop judging it`
}

test_changing_the_value_names_the_new_one if {
	new := testlib.labelled_node_class({"karpgate.io/environment": "staging"}, {})
	old := testlib.labelled_node_class({"karpgate.io/environment": "PROD"}, {})
	some f in violation with input as update(old, new) with data.karpgate.config as config
	contains(f.msg, `(label karpgate.io/environment was "PROD", now "staging")`)
}

test_still_production_is_not_reported if {
	new := testlib.labelled_node_class({"karpgate.io/environment": "prod"}, {})
	count(violation) == 0 with input as object.union(update(prod_class, new), {"objectProduction": true}) with data.karpgate.config as config
}

test_creation_and_non_production_objects_are_not_reported if {
	count(violation) == 0 with input as {"operation": "CREATE", "object": prod_class, "objectProduction": true} with data.karpgate.config as config
	old := testlib.labelled_node_class({"karpgate.io/environment": "dev"}, {})
	count(violation) == 0 with input as object.union(update(old, testlib.node_class({})), {"oldObjectProduction": false}) with data.karpgate.config as config
}
