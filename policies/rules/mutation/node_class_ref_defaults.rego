# METADATA
# title: nodeClassRef group and kind filled in
# description: >-
#   v1 requires nodeClassRef group and kind, and a NodePool that names only
#   the EC2NodeClass is the commonest v1 apply failure. The mutating webhook
#   fills in the AWS provider's group and kind, and says so
#   (karpgate.yaml mutations.nodeClassRefDefaults). A reference that names
#   another provider's group or kind (AKSNodeClass, KWOKNodeClass) is left
#   as written: the API server then says what is missing.
# custom:
#   id: KG701
#   noTwin: 'A mutation: a ValidatingAdmissionPolicy cannot change the object.'
#   severity: warn
#   kinds: [NodePool]
#   points: [admission]
#   mutates: true
#   fix: Write group and kind in the manifest, so that it applies the same without karpgate.
package karpgate.rules.mutation_node_class_ref_defaults

import data.karpgate.lib

violation contains {
	"msg": sprintf("karpgate set %s, which v1 requires and the manifest left out", [concat(" and ", [sprintf("%s: %s", [field, defaults[field]]) | some field in missing])]),
	"path": lib.node_class_ref_path,
	"patch": [{"op": "add", "path": sprintf("/spec/template/spec/nodeClassRef/%s", [field]), "value": defaults[field]} | some field in missing],
} if {
	data.karpgate.config.mutations.nodeClassRefDefaults
	lib.is_v1
	input.object.kind == "NodePool"
	lib.node_class_ref_is_object
	missing := [field | some field in ["group", "kind"]; needs(field)]
	count(missing) > 0
}

defaults := {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"}

# A reference that names another provider's kind (AKSNodeClass,
# KWOKNodeClass) keeps its group to its author: only an EC2NodeClass, or a
# reference with no kind, is the AWS provider's.
needs("group") if {
	lib.node_class_ref_group in {"", null}
	not other_provider_kind
}

other_provider_kind if {
	is_string(lib.node_class_ref_kind)
	not lib.node_class_ref_kind in {"", defaults.kind}
}

# EC2NodeClass is the kind of the AWS group only; another provider's group
# keeps its kind to its author.
needs("kind") if {
	lib.node_class_ref_kind in {"", null}
	lib.node_class_ref_group in {"", null, defaults.group}
}
