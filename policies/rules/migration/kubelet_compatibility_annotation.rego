# METADATA
# title: Leftover v1beta1 kubelet compatibility annotation
# description: >-
#   Karpenter v1.0's conversion kept the v1beta1 kubelet block in the
#   compatibility.karpenter.sh/v1beta1-kubelet-conversion annotation, and
#   while it is there Karpenter uses it instead of EC2NodeClass.spec.kubelet.
#   Edits to the EC2NodeClass's kubelet are ignored, and removing the
#   annotation later switches the source and can drift every node.
# custom:
#   id: KG406
#   severity: warn
#   kinds: [NodePool]
#   fix: Copy the annotation's kubelet settings into the EC2NodeClass's spec.kubelet, check they match, then remove the annotation.
package karpgate.rules.migration_kubelet_compatibility_annotation

import data.karpgate.lib

key := "compatibility.karpenter.sh/v1beta1-kubelet-conversion"

violation contains {
	"msg": "Karpenter uses this annotation's kubelet settings instead of the EC2NodeClass's spec.kubelet until it is removed; removing it switches the source and can drift every node",
	"path": lib.annotation_path(key),
} if {
	key in object.keys(lib.annotations)
}
