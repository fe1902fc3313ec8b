package readme

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
)

// Markdown renders the catalog as policies/README.md: the built-in rules
// (policies.BuiltinCatalog) and karpgate's Rego builtins.
func Markdown(c policies.Catalog) []byte {
	var b bytes.Buffer
	b.WriteString(intro)
	b.WriteString("\n## Rules\n\n| ID | Title | Severity | Kinds | API server twin |\n|---|---|---|---|---|\n")
	for _, r := range c {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s |\n", r.ID, strings.ToLower(r.ID), escapeCell(r.Title), r.Severity, strings.Join(r.Kinds, ", "), escapeCell(twinCell(r)))
	}
	for _, r := range c {
		fmt.Fprintf(&b, "\n### %s\n\n**%s** (%s; %s%s)\n\n", r.ID, r.Title, r.Severity, strings.Join(r.Kinds, ", "), pointsNote(r))
		if r.Description != "" {
			b.WriteString(r.Description + "\n\n")
		}
		if r.Fix != "" {
			fmt.Fprintf(&b, "Fix: %s\n\n", r.Fix)
		}
		if !r.Waivable {
			b.WriteString("This rule cannot be waived.\n\n")
		}
		if r.TwinFile != "" {
			fmt.Fprintf(&b, "Twin: `%s`, enforced by the API server as a validation of ValidatingAdmissionPolicy `karpgate`.\n\n", r.TwinFile)
		}
		fmt.Fprintf(&b, "Source: `%s` (package `%s`)\n", strings.TrimPrefix(r.File, policies.BuiltinFilePrefix), r.Package)
	}
	b.WriteString("\n## Builtins for policies\n\nkarpgate adds these functions to Rego; `karpgate verify` and user policies can call them.\n\n")
	for _, f := range budgetfuncs.Functions() {
		fmt.Fprintf(&b, "- `%s`: %s\n", f.Name, f.Description)
	}
	return b.Bytes()
}

// twinCell says whether a rule has a CEL twin, or why not.
func twinCell(r policies.Rule) string {
	switch {
	case r.TwinFile != "":
		return "yes"
	case r.NoTwin != "":
		return "no: " + r.NoTwin
	}
	return "no"
}

// pointsNote names the enforcement points of a rule that does not run everywhere.
func pointsNote(r policies.Rule) string {
	var note string
	if len(r.Points) > 0 {
		names := make([]string, len(r.Points))
		for i, p := range r.Points {
			names[i] = string(p)
		}
		note = "; " + strings.Join(names, ", ") + " only"
	}
	if len(r.Operations) > 0 {
		names := make([]string, len(r.Operations))
		for i, o := range r.Operations {
			names[i] = string(o)
		}
		note += "; " + strings.Join(names, ", ") + " requests only"
	}
	for _, p := range config.EnforcementPoints {
		if a, ok := r.Actions[p]; ok && a != r.Severity {
			note += fmt.Sprintf("; %s at %s", a, p)
		}
	}
	return note
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

const intro = `<!-- Generated from the rules' METADATA by ` + "`go test ./policies -run TestReadmeIsUpToDate -update`" + `; do not edit. -->
# karpgate policies

The built-in rule set that ` + "`karpgate lint`" + ` runs in CI and the admission webhook runs
in the cluster. Each rule is one Rego v1 package under ` + "`data.karpgate.rules`" + ` in
[rules/](rules/), next to its ` + "`_test.rego`" + ` unit tests; the package's METADATA
annotation (title, description, and ` + "`custom`" + ` id, severity, kinds, fix) is the
rule's only description, and this file is generated from it.

A rule reports with ` + "`violation contains {\"msg\": ..., \"path\": ..., \"fix\": ...}`" + `:
` + "`msg`" + ` says what is wrong, ` + "`path`" + ` is a Kubernetes field path such as
` + "`spec.disruption.budgets[1].schedule`" + ` (karpgate turns it into a file, line and column),
` + "`fix`" + ` overrides the rule's default fix, and ` + "`patch`" + ` (RFC 6902 operations on the
object) makes the violation a mutation: the admission webhook's mutating endpoint applies
it and reports it as a warning. A rule that returns patches declares
` + "`custom.mutates: true`" + `; the mutating endpoint evaluates only those rules, and lint
and the validating endpoint never do. A rule that writes a ` + "`patch`" + ` key without the
declaration is refused when it loads, or fails its evaluation. ` + "`custom.points: [admission]`" + ` runs a rule at one enforcement point only, for
rules that compare an UPDATE with ` + "`input.oldObject`" + ` or that mutate, and
` + "`custom.points: [ci]`" + ` for rules that need ` + "`input.inventory`" + `.
` + "`custom.operations: [UPDATE]`" + ` evaluates a rule only for UPDATE requests (and
` + "`[CREATE]`" + ` only for creations and lint, which judges an object as created), so a rule
about what an update changes costs a creation nothing.

A rule is memoized when the engine can tell from its Rego which fields of the input it
reads (constant paths, ` + "`object.get`" + ` with a constant path, the budget builtins) and
none of them tells objects apart (the name, UID and the rest of the metadata but labels and
annotations, or ` + "`input.inventory`" + `): it is evaluated once per distinct value of
those fields and its findings reused for every object that agrees on them. A rule that
reads ` + "`input`" + ` whole, uses a computed key or path into it, ` + "`with`" + `, or a
non-deterministic builtin is evaluated with every object. Read only what a rule judges: a
field of input passed straight to a type test (` + "`is_object`" + `, ` + "`is_string`" + `, ` + "`type_name`" + ` and
the like) counts by its type alone. ` + "`is_object(input.object.spec.template.spec.nodeClassRef)`" + `
beside ` + "`object.get(input.object, [\"spec\", \"template\", \"spec\", \"nodeClassRef\", \"group\"], null)`" + `
keys a rule by the group; reading nodeClassRef whole keys it by the EC2NodeClass's name
too, which differs from NodePool to NodePool.

Rules see ` + "`input.object`" + `, ` + "`input.oldObject`" + ` (UPDATE), ` + "`input.operation`" + `,
` + "`input.enforcementPoint`" + ` (` + "`ci`" + ` or ` + "`admission`" + `), ` + "`input.production`" + ` (from
karpgate.yaml and ` + "`--environment`" + `; on an UPDATE, true when the old or the new object is
production, so that removing the label cannot switch production rules off for the same write),
` + "`input.objectProduction`" + ` and ` + "`input.oldObjectProduction`" + ` (each object's own verdict) and, offline, ` + "`input.inventory`" + ` (the other objects
of the input); in lint, ` + "`input.object`" + ` carries the CRD's defaults (below);
` + "`data.karpgate.config`" + ` is karpgate.yaml.

## The API server's verdict (KG801-KG811)

` + "`karpgate lint`" + ` first judges every object as the API server would judge a
` + "`kubectl apply`" + `, offline, with the API server's own code
(k8s.io/apiextensions-apiserver: structural schema, defaults, unknown fields under strict
field validation, OpenAPI validation, list types, x-kubernetes-validations CEL rules with
the API server's cost limits) and Karpenter's CRDs: by default those of the Karpenter
release linked into karpgate (` + "`karpgate version`" + ` names it), or ` + "`--crds PATH`" + `, or
` + "`--crds-from-cluster`" + `. Each reason for a refusal becomes ` + "`input.schema`" + ` for the rules under
[rules/schema/](rules/schema/), one class per rule, with the API server's message and a
fix where one is obvious (a misspelt field or value, quotes); only those rules see
` + "`input.schema`" + `, and they run only for an object the API server would refuse, so
they cost nothing on a clean object. They are configured, waived and reported like any
rule; their points are ` + "`[ci]`" + `. A v1beta1 object the CRDs no
longer serve is judged as karpgate's conversion to v1, pointing back at the v1beta1 field.
The other rules then see the object with the CRD's defaults filled in, as the cluster would
store it (` + "`--show-defaults`" + ` prints it). When a karpgate rule reports the very field a
schema finding is about, at least as strictly, only the karpgate rule's finding is shown.
Lint reads YAML as kubectl and Helm do, with YAML 1.1's booleans: a bare
` + "`yes`" + `, ` + "`no`" + `, ` + "`on`" + `, ` + "`off`" + `, ` + "`y`" + ` or ` + "`n`" + ` is a boolean (a key
` + "`on:`" + ` is the key ` + "`\"true\"`" + `). Where the API server refuses that boolean, the
schema finding's fix says to quote it; where it takes it, KG811 warns, because a YAML 1.2
reader sees a string.
At admission the API server decides itself.

` + "`karpgate lint`" + ` streams its input, so a rule that reads ` + "`input.inventory`" + ` (a
cross-object rule) runs after the whole input is read, on what lint kept: the fields the
built-in cross-object rules read. Of the object, its apiVersion, kind, name, namespace,
nodeClassRef, NodePool kubelet block and kubelet compatibility annotation; of the other
objects, their apiVersion, kubelet block and compatibility annotation. A ` + "`--policy`" + ` rule that reads ` + "`input.inventory`" + ` sees whole objects instead;
lint then keeps every object until the end, and its memory grows with the input.

## Severity, actions and waivers

Each rule has a severity, ` + "`deny`" + `, ` + "`warn`" + ` or ` + "`audit`" + `. karpgate.yaml can turn a rule off,
change its severity, or give it a different action per enforcement point. ` + "`audit`" + ` only
records: the audit of stored objects, lint's JSON and SARIF and the metrics report it, kubectl
never shows it and nothing fails on it, so a new rule is rolled out as audit, then warn, then
deny:

` + "```yaml" + `
rules:
  KG101:
    actions: {ci: deny, admission: warn}
    waivable: false
  KG302:
    enabled: false
  ACME101:
    actions: {admission: audit}
waivers:
  approvers: {groups: [platform-team]}
` + "```" + `

An object waives a rule with the annotation ` + "`karpgate.io/waive-<ID>: \"<reason>\"`" + `, or
` + "`\"until 2027-01-31: <reason>\"`" + ` to waive it through that day (UTC; an RFC 3339 instant
works too). Waived findings are counted and listed apart. A waiver without a reason (KG001),
past its expiry (KG003), with an expiry that does not read (KG004) or of a rule that cannot be
waived (KG005: the waiver rules, and those karpgate.yaml marks ` + "`waivable: false`" + `) waives
nothing and is itself reported. At admission, a waiver that a write adds or changes does not
waive a deny finding of that same write on a production object (the object or the stored object
is production) that the stored object did not already have: the write is refused, and the waiver
goes in a write of its own, first. With ` + "`waivers.approvers`" + ` set, only the users and groups
it names may add or change a waiver (KG006), and theirs waive at once;
` + "`waivers.allowSameWrite: true`" + ` lets anyone's do so. karpgate records who set each waiver in
the annotation ` + "`karpgate.io/waivers-set-by`" + `, and refuses a write whose record is not the one
it writes.

## Twins in the API server

The rules CEL can express have a twin: a CEL file beside the Rego
(` + "`rules/ami/latest.cel`" + ` beside ` + "`rules/ami/latest.rego`" + `) that computes the same
violations, from the same helpers as ` + "`lib.rego`" + `'s (` + "`rules/lib/lib.cel`" + `). karpgate
installs them as the validations of one ValidatingAdmissionPolicy, ` + "`karpgate`" + `, so that
the API server enforces them itself, with no network hop, while the webhook is down,
unreachable or slow ([docs/admission-policy.md](../docs/admission-policy.md)). A twin
says what the webhook says (` + "`KG101 spec.amiSelectorTerms[0].alias: ... (fix: ...)`" + `,
findings joined by ` + "` | `" + `), and takes its ID, default fix, kinds, operations and
waivability from the rule's METADATA. The policy is bound three times, with the
validation actions Deny, Warn and Audit, each with a parameter object (a ConfigMap) built
from karpgate.yaml and the Karpenter release judged; a twin applies through the binding of
its rule's action at admission, so ` + "`rules.<ID>`" + ` settings move it between them. Around
each twin the policy does what the webhook does: production judged from the old and the new
object, waivers, and on UPDATE no denial for what the old object already had. A
differential test (` + "`test/twins`" + `) runs the verdict corpus, the rule fixtures and
fuzzed objects through each rule and its twin, with the API server's own policy evaluator,
and fails on any difference in verdict or message.

The table's last column says which rules have a twin; a rule without one says why in its
METADATA (` + "`custom.noTwin`" + `). Your own rules never have one: the API server cannot run
Rego. Where a twin cannot do what the rule does, it is stricter: a waiver with an expiry
(` + "`until 2027-01-31: ...`" + `) waives nothing in the API server, which has no clock, and
approved alias versions beyond ASCII compare exactly rather than case-insensitively.

## Your own rules

` + "`--policy DIR`" + ` adds Rego files compiled together with these rules, and ` + "`--data DIR`" + `
adds JSON/YAML documents under ` + "`data`" + `. A user rule is a package directly under
` + "`data.karpgate.rules`" + ` with the same METADATA (its ID must not start with KG) and a
` + "`violation`" + ` set. Policies cannot reach the network, the environment or local files:
` + "`http.send`" + `, ` + "`net.*`" + `, ` + "`opa.runtime`" + `, ` + "`providers.*`" + ` and the JSON-schema builtins
(` + "`json.match_schema`" + `, ` + "`json.verify_schema`" + `, whose ` + "`$ref`" + ` reads files) are rejected when
compiling, as are builtins with no cost a policy could be held to (` + "`strings.render_template`" + `,
` + "`graph.reachable_paths`" + `, ` + "`graphql.*`" + `, ` + "`rego.parse_module`" + `, ` + "`regex.globs_match`" + `,
` + "`regex.template_match`" + `) and any builtin
of a newer OPA that karpgate has not judged yet. Every evaluation is bounded: 250,000 steps, 1 MiB
for what one builtin call makes (a call that can make more than it is given, such as
` + "`regex.find_all_string_submatch_n`" + `, ` + "`split`" + `, ` + "`indexof_n`" + ` or ` + "`json.unmarshal`" + `, is sized from its
arguments and refused before it runs), 16 MiB for what its builtins make in all, and 10 seconds
(or the request's deadline, if sooner), which also stops a single long call of a regular expression
or a glob part way: nothing an evaluation starts runs on after it. A policy set that
runs past these on ordinary sample objects is refused when it loads.
` + "`karpgate verify --policy DIR`" + ` runs their ` + "`test_`" + ` rules with karpgate's builtins.

` + "`custom.kinds`" + ` names the kinds a rule judges: NodePool, NodeClaim, EC2NodeClass, or
` + "`*`" + ` for every kind. A rule about NodeOverlays (` + "`karpenter.sh/v1alpha1`" + `, Karpenter
v1.7+) lists ` + "`*`" + ` and tests ` + "`input.object.kind == \"NodeOverlay\"`" + `: NodeOverlays have no
built-in rules, and the rules for every kind judge them, in ` + "`karpgate lint`" + ` and in the
validating webhook alike. The admission webhooks see NodePools, EC2NodeClasses and
NodeOverlays (CREATE and UPDATE) and a held NodePool's DELETE; NodeClaims, which Karpenter
writes, never reach them, so a rule about NodeClaims judges in CI and the audit only, and the
audit of stored objects does not list NodeOverlays.
`
