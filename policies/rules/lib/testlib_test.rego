# Helpers for the built-in rules' Rego tests (loaded only by tests).
package karpgate.testlib

# Wednesday 5 June 2024, noon UTC: the pinned clock of budget tests.
now := time.parse_rfc3339_ns("2024-06-05T12:00:00Z")

node_class(spec) := {
	"apiVersion": "karpenter.k8s.aws/v1",
	"kind": "EC2NodeClass",
	"metadata": {"name": "default"},
	"spec": spec,
}

labelled_node_class(labels, spec) := object.union(node_class(spec), {"metadata": {"name": "default", "labels": labels}})

ref := {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}

node_pool(disruption) := {
	"apiVersion": "karpenter.sh/v1",
	"kind": "NodePool",
	"metadata": {"name": "default"},
	"spec": {"template": {"spec": {"nodeClassRef": ref}}, "disruption": disruption},
}

budgets(list) := node_pool({"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s", "budgets": list})

# The paths of a set of violations.
paths(violations) := {v.path | some v in violations}

# One entry of input.waivers, as the engine reads the annotation.
waiver(rule, fields) := object.union(
	{"rule": rule, "annotation": concat("", ["karpgate.io/waive-", rule]), "reason": "", "expired": false, "changed": false},
	fields,
)
