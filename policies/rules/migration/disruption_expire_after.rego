# METADATA
# title: expireAfter under spec.disruption
# description: >-
#   In v1, expireAfter moved from spec.disruption to spec.template.spec. The v1
#   API server prunes the unknown field without an error, so nodes expire
#   after the 720h default instead of the value written here.
# custom:
#   id: KG402
#   noTwin: 'A v1beta1 shape: the v1 CRD prunes or refuses it before any admission policy runs, and the policy judges every write as v1.'
#   severity: deny
#   kinds: [NodePool]
#   fix: Move the value to spec.template.spec.expireAfter.
package karpgate.rules.migration_disruption_expire_after

import data.karpgate.lib

violation contains {
	"msg": sprintf("spec.disruption.expireAfter (%v) is not a v1 field: the API server drops it and nodes expire after the default 720h", [input.object.spec.disruption.expireAfter]),
	"path": "spec.disruption.expireAfter",
	"fix": sprintf("Move it to spec.template.spec.expireAfter: %v", [input.object.spec.disruption.expireAfter]),
} if {
	lib.is_v1
	"expireAfter" in object.keys(object.get(input.object, ["spec", "disruption"], {}))
}
