# METADATA
# title: Selector change drifts the nodes it no longer selects
# description: >-
#   Karpenter does not hash an EC2NodeClass's AMI, subnet, security-group
#   (and capacity-reservation, placement-group) selectors: it resolves them
#   and drifts each node whose own AMI, subnet or security groups are no
#   longer among what they resolve to (AMIDrift, SubnetDrift,
#   SecurityGroupDrift). An update to them can replace some nodes or all,
#   depending on what they select now, which only the cloud knows.
# custom:
#   id: KG603
#   severity: warn
#   kinds: [EC2NodeClass]
#   points: [admission]
#   operations: [UPDATE]
#   fix: Check what the new terms resolve to (kubectl get ec2nodeclass -o yaml, status.amis, status.subnets, status.securityGroups) before nodes drift, and when the Drifted budgets allow it (karpgate budgets).
package karpgate.rules.update_selector_terms_changed

import data.karpgate.lib

# Alias version moves are KG601's and KG602's: they drift every node.
violation contains {
	"msg": sprintf("this update changes %s: Karpenter resolves it anew and drifts (%s) every node of %s whose own value it no longer selects", [path, reason, lib.ref(input.object)]),
	"path": path,
} if {
	input.operation == "UPDATE"
	some path, reason in data.karpgate.karpenter.resolutionDrift
	p := split(path, ".")
	new := object.get(input.object, p, null)
	old := object.get(input.oldObject, p, null)
	normal(new) != normal(old)
	not alias_only(path, new, old)
}

# Terms are ORed: their order does not matter.
normal(x) := {e | some e in x} if is_array(x)

else := x

alias_only("spec.amiSelectorTerms", new, old) if {
	some t in new
	is_string(t.alias)
	some u in old
	is_string(u.alias)
}
