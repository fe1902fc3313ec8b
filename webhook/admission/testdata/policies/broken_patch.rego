# METADATA
# title: A mutation whose patch cannot apply
# custom:
#   id: ACME702
#   severity: warn
#   mutates: true
#   kinds: [NodePool]
#   points: [admission]
package karpgate.rules.acme_broken_patch

violation contains {
	"msg": "karpgate replaced something that is not there",
	"path": "spec.nothing",
	"patch": [{"op": "replace", "path": "/spec/nothing/here", "value": "x"}],
} if {
	input.object.metadata.name == "broken"
}
