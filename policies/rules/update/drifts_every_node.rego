# METADATA
# title: Update replaces every node
# description: >-
#   Karpenter hashes a NodePool's spec.template (everything but requirements)
#   and an EC2NodeClass's static fields (userData, tags, blockDeviceMappings,
#   metadataOptions, role, instanceProfile, kubelet...). An update that
#   changes one of them marks every NodeClaim of the pool drifted, and
#   Karpenter replaces them all, as fast as the Drifted budgets allow.
#   Which fields are hashed is read from the Karpenter version judged (its
#   Go types' hash:"ignore" tags): ipPrefixCount, for one, drifts nothing.
#   Moving an alias to another version drifts every node the same way.
# custom:
#   id: KG601
#   noTwin: 'It walks every field the judged release hashes, a list read from Karpenter''s Go types, through both objects; CEL has no recursion to walk them.'
#   severity: warn
#   kinds: [NodePool, EC2NodeClass]
#   points: [admission]
#   operations: [UPDATE]
#   fix: If replacing every node is not what you want, revert these fields; otherwise check when the Drifted budgets allow it (karpgate budgets).
package karpgate.rules.update_drifts_every_node

import data.karpgate.lib

violation contains {
	"msg": sprintf("this update changes %s, which Karpenter hashes: every node of %s drifts and is replaced, as fast as its Drifted budgets allow", [lib.and_list(changed), lib.ref(input.object)]),
	"path": changed[0],
} if {
	input.operation == "UPDATE"
	hashed_part(input.object) != hashed_part(input.oldObject)
	changed := sort([path | some path in hashed_paths; changed_at(path)])
	count(changed) > 0
}

violation contains {
	"msg": sprintf("this update moves the AMI alias from %q to %q: every node runs an AMI the new alias does not select, so every node of %s drifts and is replaced", [old_alias, new_alias, lib.ref(input.object)]),
	"path": sprintf("spec.amiSelectorTerms[%d].alias", [i]),
} if {
	input.operation == "UPDATE"
	input.object.kind == "EC2NodeClass"
	some [i, new_alias] in lib.alias_terms
	some old_term in input.oldObject.spec.amiSelectorTerms
	old_alias := old_term.alias
	is_string(old_alias)
	lower(old_alias) != lower(new_alias)
	not latest_introduced(old_alias, new_alias) # KG602 says it better
}

latest_introduced(old_alias, new_alias) if {
	lib.alias_version(new_alias) == "latest"
	lib.alias_version(old_alias) != "latest"
}

# --- What Karpenter hashes --------------------------------------------------

# How the Karpenter version judged hashes the kind: the paths it hashes
# whole, those tagged hash:"ignore" in its Go types, and what it hashes
# besides (internal/karpenter/release, generated from each release).
hash := lib.karpenter_code.nodePoolHash if input.object.kind == "NodePool"

hash := lib.karpenter_code.ec2NodeClassHash if input.object.kind == "EC2NodeClass"

# Most updates leave the hashed part alone (they change budgets, limits or
# the weight): when it is the same value in both objects, no field in it
# changed, and the field-by-field comparison is skipped.
hashed_part(obj) := object.get(obj, ["spec", "template"], null) if input.object.kind == "NodePool"

hashed_part(obj) := object.get(obj, "spec", null) if input.object.kind == "EC2NodeClass"

# A field drifts every node when the hash reads it: under a root and not
# ignored, or read besides the roots (the kubelet block as a string).
drifts(path) if {
	some i in hash.inputs
	i.path == path
	i.how != "resolved"
}

drifts(path) if {
	some root in hash.roots
	within(path, root)
	not ignored(path)
	not resolved(path)
}

ignored(path) if {
	some p in hash.ignored
	within(path, p)
}

# A field the hash reads resolved (amiFamily: the family the alias names
# when unset), compared as resolved below.
resolved(path) if {
	some i in hash.inputs
	i.path == path
	i.how == "resolved"
}

within(path, p) if path == p

within(path, p) if startswith(path, concat("", [p, "."]))

hashed_paths contains path if {
	input.object.kind == "NodePool"
	some part in ["metadata", "spec"]
	some key in keys(["spec", "template", part])
	path := sprintf("spec.template.%s.%s", [part, key])
	drifts(path)
}

hashed_paths contains path if {
	input.object.kind == "EC2NodeClass"
	some key in keys(["spec"])
	path := sprintf("spec.%s", [key])
	drifts(path)
}

hashed_paths contains "spec.amiFamily" if {
	input.object.kind == "EC2NodeClass"
	resolved("spec.amiFamily")
	resolved_family(input.object) != resolved_family(input.oldObject)
}

keys(path) := {key | some key, _ in object.get(input.object, path, {})} | {key | some key, _ in object.get(input.oldObject, path, {})}

# The family Karpenter hashes: amiFamily when set, else the alias's family,
# so adding amiFamily: AL2023 next to al2023@latest drifts nothing.
resolved_family(obj) := lower(obj.spec.amiFamily) if {
	is_string(obj.spec.amiFamily)
} else := lib.alias_family(term.alias) if {
	some term in obj.spec.amiSelectorTerms
	is_string(term.alias)
} else := "custom"

# --- Comparing as Karpenter's hash does ---------------------------------------

# The hash treats lists as sets and zero values as absent.
changed_at(path) if {
	not resolved(path)
	p := split(path, ".")
	normal(object.get(input.object, p, null)) != normal(object.get(input.oldObject, p, null))
}

changed_at(path) if {
	resolved(path)
	hashed_paths[path]
}

normal(x) := null if {
	is_zero(x)
} else := {e | some e in x} if {
	is_array(x)
} else := x

is_zero(null)

is_zero("")

is_zero(false)

is_zero(0)

is_zero(x) if {
	is_array(x)
	count(x) == 0
}

is_zero(x) if {
	is_object(x)
	count(x) == 0
}
