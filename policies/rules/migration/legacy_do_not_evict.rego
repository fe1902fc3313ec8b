# METADATA
# title: Annotation removed in Karpenter v1
# description: >-
#   karpenter.sh/do-not-evict and karpenter.sh/do-not-consolidate were removed
#   in v1; Karpenter ignores them, so the nodes they were meant to protect are
#   disrupted like any other.
# custom:
#   id: KG407
#   severity: warn
#   kinds: [NodePool, NodeClaim, EC2NodeClass]
#   fix: 'Use karpenter.sh/do-not-disrupt: "true" instead.'
package karpgate.rules.migration_legacy_do_not_evict

import data.karpgate.lib

legacy := {"karpenter.sh/do-not-evict", "karpenter.sh/do-not-consolidate"}

violation contains {
	"msg": sprintf("%s was removed in Karpenter v1 and is ignored", [key]),
	"path": sprintf("%s[%s]", [prefix, key]),
} if {
	some prefix in ["metadata.annotations", "spec.template.metadata.annotations"]
	annotations := object.get(input.object, split(prefix, "."), {})
	is_object(annotations)
	some key in object.keys(annotations)
	key in legacy
}
