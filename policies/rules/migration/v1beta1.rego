# METADATA
# title: v1beta1 API version
# description: >-
#   Karpenter v1.1 removed the v1beta1 APIs; v1.0 was the last release that
#   converted them. A v1beta1 manifest left in Git fails to apply after the
#   upgrade, or silently loses fields when converted by hand. At admission
#   it only warns: a Karpenter v1.0 cluster still serves v1beta1, and
#   karpgate's conversion webhook converts it losslessly.
# custom:
#   id: KG401
#   noTwin: 'It reports the API version a manifest is written in; the policy, like the webhook, judges every write as the v1 object the API server converts it to.'
#   severity: deny
#   actions:
#     admission: warn
#   kinds: [NodePool, NodeClaim, EC2NodeClass]
#   fix: Run `karpgate convert` on the file to rewrite it as v1, and review the diff.
package karpgate.rules.migration_v1beta1

import data.karpgate.lib

violation contains {
	"msg": sprintf("%s is v1beta1 (%s); Karpenter v1.1 and later serve only v1", [input.object.kind, input.object.apiVersion]),
	"path": "apiVersion",
} if {
	lib.is_v1beta1
}
