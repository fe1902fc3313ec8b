# Helpers shared by the built-in rules. Not a rule package: it carries no
# metadata annotation and lives outside data.karpgate.rules.
package karpgate.lib

# The object's API version ("v1", "v1beta1").
version := v if {
	parts := split(input.object.apiVersion, "/")
	v := parts[count(parts) - 1]
}

is_v1 if version == "v1"

is_v1beta1 if version == "v1beta1"

name := object.get(input.object, ["metadata", "name"], "<unnamed>")

# "NodePool/default", for messages that name another object.
ref(obj) := sprintf("%s/%s", [obj.kind, object.get(obj, ["metadata", "name"], "<unnamed>")])

# --- AMI aliases: family@version -------------------------------------------

alias_family(alias) := lower(split(alias, "@")[0])

alias_version(alias) := lower(trim_prefix(alias, concat("", [split(alias, "@")[0], "@"])))

alias_terms contains [i, term.alias] if {
	some i, term in input.object.spec.amiSelectorTerms
	is_string(term.alias)
}

approved_versions(family) := data.karpgate.config.amis.approvedAliasVersions[family]

# The fix for an @latest alias, naming approved versions when configured.
pin_fix(alias) := sprintf("%s aliases can only be @latest: select a tested AMI by id to pin it, or accept drift on every release for %s", [alias_family(alias), alias]) if {
	alias_latest_only(alias_family(alias))
} else := sprintf("Pin an approved version: %s", [concat(", ", [sprintf("%s@%s", [alias_family(alias), v]) | some v in approved_versions(alias_family(alias))])]) if {
	count(approved_versions(alias_family(alias))) > 0
} else := sprintf("Pin a version you have tested, such as %s@%s", [alias_family(alias), example_version(alias_family(alias))])

example_version("bottlerocket") := "v1.20.3"

example_version(family) := "v20240807" if family != "bottlerocket"

# --- Kubernetes version from configuration ----------------------------------

# Minor version of the configured target Kubernetes version ("1.33" -> 33);
# undefined when not configured.
kubernetes_minor := to_number(split(trim_prefix(data.karpgate.config.kubernetesVersion, "v"), ".")[1])

# --- Annotations ------------------------------------------------------------

annotations := object.get(input.object, ["metadata", "annotations"], {})

annotation_path(key) := sprintf("metadata.annotations[%s]", [key])

# --- NodePool -----------------------------------------------------------------

node_class_ref_path := "spec.template.spec.nodeClassRef" if input.object.kind == "NodePool"

node_class_ref_path := "spec.nodeClassRef" if input.object.kind == "NodeClaim"

# Constant paths, not split(node_class_ref_path, "."): the engine memoizes
# rules by the fields they read, which it can tell only from constant paths.
node_class_ref := object.get(input.object, ["spec", "template", "spec", "nodeClassRef"], null) if input.object.kind == "NodePool"

node_class_ref := object.get(input.object, ["spec", "nodeClassRef"], null) if input.object.kind == "NodeClaim"

# nodeClassRef's type, group and kind, for rules that judge only those: a
# memoized rule is keyed by all it reads, and NodePools name many different
# EC2NodeClasses, so a rule that read node_class_ref whole would be
# evaluated anew for each name. The type test reads only whether the field
# is an object.
node_class_ref_is_object if {
	input.object.kind == "NodePool"
	is_object(input.object.spec.template.spec.nodeClassRef)
}

node_class_ref_is_object if {
	input.object.kind == "NodeClaim"
	is_object(input.object.spec.nodeClassRef)
}

node_class_ref_group := object.get(input.object, ["spec", "template", "spec", "nodeClassRef", "group"], null) if input.object.kind == "NodePool"

node_class_ref_group := object.get(input.object, ["spec", "nodeClassRef", "group"], null) if input.object.kind == "NodeClaim"

node_class_ref_kind := object.get(input.object, ["spec", "template", "spec", "nodeClassRef", "kind"], null) if input.object.kind == "NodePool"

node_class_ref_kind := object.get(input.object, ["spec", "nodeClassRef", "kind"], null) if input.object.kind == "NodeClaim"

# The kubelet block a NodePool carried before v1: spec.template.spec.kubelet
# on v1beta1, the compatibility annotation Karpenter's conversion wrote on
# v1; null when it has none.
legacy_kubelet(pool) := pool.spec.template.spec.kubelet if {
	endswith(pool.apiVersion, "/v1beta1")
} else := json.unmarshal(pool.metadata.annotations["compatibility.karpenter.sh/v1beta1-kubelet-conversion"]) if {
	endswith(pool.apiVersion, "/v1")
} else := null

legacy_kubelet_path(pool) := "spec.template.spec.kubelet" if {
	endswith(pool.apiVersion, "/v1beta1")
} else := annotation_path("compatibility.karpenter.sh/v1beta1-kubelet-conversion")

# --- Disruption budgets -------------------------------------------------------

# The problems of the object's budgets, from karpgate.budgets.problems: a
# rule, so that one evaluation computes them once for the six rules that
# read them.
all_budget_problems := karpgate.budgets.problems(input.object)

# The problems of one kind (schedule, duration, pairing, reasons, nodes, list).
budget_problems(kind) := [p |
	some p in all_budget_problems
	p.kind == kind
]

budget_violation(p) := {"msg": p.message, "path": p.path, "fix": sprintf("Use %s.", [p.fix])} if {
	p.fix != ""
} else := {"msg": p.message, "path": p.path}

# What the budgets mean around the evaluation time; see karpgate.budgets.analyze.
budget_analysis := karpgate.budgets.analyze(input.object, time.now_ns())

budget_path(i) := sprintf("spec.disruption.budgets[%d]", [i])

# --- The Karpenter version judged ---------------------------------------------

# data.karpgate.karpenter is the Karpenter version objects are judged by and
# its facts, from internal/karpenter/release: chosen by lint's CRD set or
# --karpenter-version, and at admission by the CRDs installed in the
# cluster or karpgate.yaml's karpenterVersion. Rules ask it rather than
# spell a Karpenter fact themselves.
karpenter_version := data.karpgate.karpenter.version

karpenter_schema := data.karpgate.karpenter.facts.schema

karpenter_code := data.karpgate.karpenter.facts.code

# Disruption reasons of the version judged, in Karpenter's order.
reasons := karpenter_schema.budgetReasons

# The release line a value of a kind of fact ("budgetReasons",
# "consolidationPolicies", "aliasFamilies", ...) first appeared in;
# undefined for values every known release has.
introduced(kind, value) := data.karpgate.karpenter.introduced[kind][value]

# " (Unhealthy is new in Karpenter v1.15)", or "" when the value is not
# one of a newer release.
newer_release_note(kind, value) := sprintf(" (%s is new in Karpenter %s)", [value, introduced(kind, value)]) if {
	introduced(kind, value)
} else := ""

# Alias families that the version judged accepts only with @latest.
alias_latest_only(family) if {
	some f in karpenter_schema.aliasFamilies
	f.family == family
	f.latestOnly
}

# "a", "a and b", "a, b and c".
and_list(xs) := xs[0] if count(xs) == 1

and_list(xs) := concat(" and ", [concat(", ", array.slice(xs, 0, count(xs) - 1)), xs[count(xs) - 1]]) if count(xs) > 1

# --- The API server's verdict (lint's CRD schema stage) -----------------------

# input.schema lists what the API server would refuse about the object, found
# offline by lint from Karpenter's CRDs; each rule under rules/schema/ reports
# one class of it. Absent at admission, where the API server itself decides.
schema_violations(class) := {{"msg": s.message, "path": s.path, "fix": s.fix} |
	some s in input.schema
	s.class == class
}

# --- Floating AMI selector terms (KG109, KG110) ---------------------------------

# The amiSelectorTerms that select whatever AMI is published next, as an
# @latest alias does, one entry per floating field: its path, what floats
# (for the message) and what to pin instead. An SSM parameter outside
# /aws/service/ is not judged: it moves only when its owner writes it. Nor
# are exact tag values, which on images the customer owns are the customer's
# own release process. ssmParameter is not judged when the facts of the
# Karpenter release judged list the term's fields without it (v1.0; the
# field is new in v1.4): that release refuses the field, and a message about
# what it would select would mislead. Lines whose facts state no
# EC2NodeClass fields are judged: at admission the API server has already
# pruned or refused a field its CRD lacks.
floating_ami_terms contains {
	"index": i,
	"path": sprintf("spec.amiSelectorTerms[%d].ssmParameter", [i]),
	"what": sprintf("ssmParameter %q is a public AWS parameter that moves to each new AMI (%q)", [term.ssmParameter, segment]),
	"fix": sprintf("Pin the AMI you tested: its id, or %s", [ssm_pin_example(term.ssmParameter, segment)]),
} if {
	some i, term in input.object.spec.amiSelectorTerms
	is_string(term.ssmParameter)
	not ssm_parameter_unknown
	segment := floating_ssm_segment(term.ssmParameter)
}

floating_ami_terms contains {
	"index": i,
	"path": sprintf("spec.amiSelectorTerms[%d].name", [i]),
	"what": sprintf("name %q has a * that every newer AMI of the series matches", [term.name]),
	"fix": sprintf("Pin the AMI you tested: its id, or its exact name (%q with the release in place of *) together with owner", [term.name]),
} if {
	some i, term in input.object.spec.amiSelectorTerms
	is_string(term.name)
	contains(term.name, "*")
}

floating_ami_terms contains {
	"index": i,
	"path": sprintf("spec.amiSelectorTerms[%d].tags[%s]", [i, key]),
	"what": sprintf("it selects by tags alone, and tag %s's value %q has a * that the next AMI tagged to fit matches", [key, value]),
	"fix": "Pin the AMI you tested: its id, its exact name together with owner, or exact tag values on images you own",
} if {
	some i, term in input.object.spec.amiSelectorTerms
	is_object(term.tags)
	not selects_by_more_than_tags(term)
	some key, value in term.tags
	is_string(value)
	contains(value, "*")
}

ssm_parameter_unknown if {
	fields := karpenter_schema.amiSelectorTermFields
	not "ssmParameter" in fields
}

selects_by_more_than_tags(term) if {
	some field in ["id", "name", "alias", "ssmParameter"]
	term[field]
}

# The first segment of a public AWS parameter's path that names a moving
# release: /aws/service/eks/.../recommended/image_id, /aws/service/bottlerocket/
# .../latest/image_id, /aws/service/canonical/.../current/..., or a folder
# such as ami-amazon-linux-latest. Undefined for a versioned path.
floating_ssm_segment(parameter) := segments[0] if {
	startswith(lower(trim_left(parameter, "/")), "aws/service/")
	segments := [s |
		some s in split(parameter, "/")
		floating_segment(lower(s))
	]
	count(segments) > 0
}

floating_segment(s) if s in {"recommended", "current"}

floating_segment(s) if contains(s, "latest")

# The versioned parameter to pin to, by the AMI family the path names.
ssm_pin_example(parameter, _) := "the parameter of the tested release, such as /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20250519/image_id" if {
	contains(lower(parameter), "/eks/optimized-ami/")
} else := "the parameter of the tested release, such as /aws/service/bottlerocket/aws-k8s-1.33/x86_64/1.39.1/image_id" if {
	contains(lower(parameter), "/bottlerocket/")
}

ssm_pin_example(parameter, segment) := sprintf("a parameter that names the tested release in place of %q", [segment]) if {
	not contains(lower(parameter), "/eks/optimized-ami/")
	not contains(lower(parameter), "/bottlerocket/")
}
