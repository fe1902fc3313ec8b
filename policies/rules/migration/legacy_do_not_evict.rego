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

# The annotations each place holds, by the path findings name. The paths are
# written out, not split from the names, so that the engine can tell which
# fields the rule reads and memoize it by them.
annotations_at["metadata.annotations"] := object.get(input.object, ["metadata", "annotations"], {})

annotations_at["spec.template.metadata.annotations"] := object.get(input.object, ["spec", "template", "metadata", "annotations"], {})

violation contains {
	"msg": sprintf("%s was removed in Karpenter v1 and is ignored", [key]),
	"path": sprintf("%s[%s]", [prefix, key]),
} if {
	some prefix, annotations in annotations_at
	is_object(annotations)
	some key in object.keys(annotations)
	key in legacy
}
