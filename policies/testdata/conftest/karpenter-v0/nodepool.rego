# A conftest policy for Karpenter NodePools as teams wrote them before Rego
# v1: package main, deny[msg] without `contains` or `if`.
package main

deny[msg] {
	input.kind == "NodePool"
	not input.spec.limits
	msg := sprintf("NodePool %s has no spec.limits: a runaway scale-up has no ceiling", [input.metadata.name])
}

warn_expire[msg] {
	input.kind == "NodePool"
	input.spec.template.spec.expireAfter == "Never"
	msg := {"msg": sprintf("NodePool %s never expires its nodes", [input.metadata.name]), "details": {"field": "spec.template.spec.expireAfter"}}
}

exception[rules] {
	input.metadata.annotations["example.com/unlimited"] == "approved"
	rules := [""]
}
