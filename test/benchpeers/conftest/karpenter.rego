# The checks of karpgate's rule set that plain Rego can make on one
# document, for conftest in `make bench-peers`: what a team would write for
# conftest without karpgate's cron and budget builtins, its cross-object
# index or its field positions. Budget schedules, windows and durations
# need a cron parser and are left out, as they would be.
package main

karpenter_kinds := {"NodePool", "NodeClaim", "EC2NodeClass"}

name := object.get(input, ["metadata", "name"], "<unnamed>")

is_v1 if input.apiVersion in {"karpenter.sh/v1", "karpenter.k8s.aws/v1"}

# KG101/KG102: an @latest alias drifts every node at each AMI release.
warn contains sprintf("EC2NodeClass/%s: alias %s follows every AMI release", [name, term.alias]) if {
	input.kind == "EC2NodeClass"
	some term in input.spec.amiSelectorTerms
	endswith(term.alias, "@latest")
}

# KG401: v1beta1 is gone from Karpenter v1.1.
deny contains sprintf("%s/%s: %s is not served by Karpenter v1.1 and later", [input.kind, name, input.apiVersion]) if {
	input.kind in karpenter_kinds
	endswith(input.apiVersion, "/v1beta1")
}

# KG402: expireAfter moved to spec.template.spec in v1.
deny contains sprintf("NodePool/%s: spec.disruption.expireAfter is not a v1 field", [name]) if {
	input.kind == "NodePool"
	is_v1
	"expireAfter" in object.keys(object.get(input, ["spec", "disruption"], {}))
}

# KG403: WhenUnderutilized was renamed in v1.
deny contains sprintf("NodePool/%s: consolidationPolicy WhenUnderutilized is not a v1 value", [name]) if {
	input.kind == "NodePool"
	is_v1
	input.spec.disruption.consolidationPolicy == "WhenUnderutilized"
}

# KG404: v1 requires group and kind in nodeClassRef.
deny contains sprintf("NodePool/%s: nodeClassRef has no %s", [name, field]) if {
	input.kind == "NodePool"
	is_v1
	ref := input.spec.template.spec.nodeClassRef
	some field in ["group", "kind"]
	not ref[field]
}

# KG405: a group is not an apiVersion.
deny contains sprintf("NodePool/%s: nodeClassRef group %s is an apiVersion", [name, input.spec.template.spec.nodeClassRef.group]) if {
	input.kind == "NodePool"
	is_v1
	contains(input.spec.template.spec.nodeClassRef.group, "/")
}

# KG408: kubelet moved to the EC2NodeClass in v1.
deny contains sprintf("NodePool/%s: spec.template.spec.kubelet is not a v1 field", [name]) if {
	input.kind == "NodePool"
	is_v1
	"kubelet" in object.keys(object.get(input, ["spec", "template", "spec"], {}))
}
