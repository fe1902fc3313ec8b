# METADATA
# title: nodeClassRef without group or kind
# description: >-
#   In v1, nodeClassRef needs group, kind and name. Without them the API
#   server rejects the object: the most common failure when applying a v1
#   NodePool written from a v1beta1 one.
# custom:
#   id: KG404
#   noTwin: 'A v1beta1 shape: the v1 CRD prunes or refuses it before any admission policy runs, and the policy judges every write as v1.'
#   severity: deny
#   kinds: [NodePool, NodeClaim]
#   fix: 'Add group: karpenter.k8s.aws and kind: EC2NodeClass next to name.'
package karpgate.rules.migration_node_class_ref_incomplete

import data.karpgate.lib

violation contains {
	"msg": sprintf("%s has no %s, which v1 requires", [lib.node_class_ref_path, concat(" or ", missing)]),
	"path": lib.node_class_ref_path,
	"fix": sprintf("Add %s", [concat(" and ", [fix | some field in missing; fix := defaults[field]])]),
} if {
	lib.is_v1
	lib.node_class_ref_is_object
	missing := [field | some field in ["group", "kind"]; not is_string(present[field])]
	count(missing) > 0
}

present := {"group": lib.node_class_ref_group, "kind": lib.node_class_ref_kind}

defaults := {"group": "group: karpenter.k8s.aws", "kind": "kind: EC2NodeClass"}
