# METADATA
# title: nodeClassRef group holds an apiVersion
# description: >-
#   v1beta1 referenced the node class by apiVersion (karpenter.k8s.aws/v1beta1);
#   v1 takes the group alone. A group with a / is rejected by the API server.
# custom:
#   id: KG405
#   noTwin: 'A v1beta1 shape: the v1 CRD prunes or refuses it before any admission policy runs, and the policy judges every write as v1.'
#   severity: deny
#   kinds: [NodePool, NodeClaim]
#   fix: Keep only the part before the /, for example group karpenter.k8s.aws.
package karpgate.rules.migration_node_class_ref_group_slash

import data.karpgate.lib

violation contains {
	"msg": sprintf("nodeClassRef group %q is an apiVersion, not a group", [group]),
	"path": concat(".", [lib.node_class_ref_path, "group"]),
	"fix": sprintf("Use group: %s", [split(group, "/")[0]]),
} if {
	lib.is_v1
	group := lib.node_class_ref_group
	is_string(group)
	contains(group, "/")
}
