# METADATA
# title: WhenUnderutilized consolidation policy in v1
# description: >-
#   v1 renamed consolidationPolicy WhenUnderutilized to
#   WhenEmptyOrUnderutilized; the v1 API server rejects the old value.
# custom:
#   id: KG403
#   noTwin: 'A v1beta1 shape: the v1 CRD prunes or refuses it before any admission policy runs, and the policy judges every write as v1.'
#   severity: deny
#   kinds: [NodePool]
#   fix: Use consolidationPolicy WhenEmptyOrUnderutilized and set consolidateAfter (0s keeps v1beta1's behaviour).
package karpgate.rules.migration_when_underutilized

import data.karpgate.lib

violation contains {
	"msg": "consolidationPolicy WhenUnderutilized was renamed in v1 and is rejected by the v1 API",
	"path": "spec.disruption.consolidationPolicy",
} if {
	lib.is_v1
	input.object.spec.disruption.consolidationPolicy == "WhenUnderutilized"
}
