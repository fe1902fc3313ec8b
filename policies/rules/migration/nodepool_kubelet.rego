# METADATA
# title: kubelet on a v1 NodePool
# description: >-
#   v1 moved the kubelet settings from NodePool spec.template.spec.kubelet to
#   EC2NodeClass spec.kubelet. The v1 API server prunes the old field without
#   an error, so the settings are lost.
# custom:
#   id: KG408
#   noTwin: 'A v1beta1 shape: the v1 CRD prunes or refuses it before any admission policy runs, and the policy judges every write as v1.'
#   severity: deny
#   kinds: [NodePool]
#   fix: Move the block to the referenced EC2NodeClass's spec.kubelet (or run `karpgate convert` on the v1beta1 original).
package karpgate.rules.migration_nodepool_kubelet

import data.karpgate.lib

violation contains {
	"msg": "spec.template.spec.kubelet is not a v1 field: the API server drops it and the nodes start with the EC2NodeClass's kubelet settings",
	"path": "spec.template.spec.kubelet",
} if {
	lib.is_v1
	has_kubelet
}

# The field is set, even to null: object.get's default is a set, which no
# decoded object holds. Reading the field alone (not the keys of the whole
# template spec) keeps the rule from being keyed by the rest of the spec.
has_kubelet if object.get(input.object, ["spec", "template", "spec", "kubelet"], set()) != set()
