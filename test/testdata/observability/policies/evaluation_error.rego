# METADATA
# title: Fails evaluation on purpose
# description: >-
#   The observability e2e test needs an admission request whose evaluation
#   fails (verdict "error"): a violation without msg is refused by the engine.
# custom:
#   id: E2E900
#   severity: deny
#   kinds: [NodePool]
package karpgate.rules.e2e_evaluation_error

violation contains {"path": "metadata.name"} if {
	input.object.metadata.name == "evaluation-error"
}
