// Package twin translates the built-in rules that CEL can express into
// karpgate's ValidatingAdmissionPolicy, so that the API server itself
// enforces them while the webhook is down, unreachable or slow.
//
// A rule's twin is a CEL file beside its Rego (rules/ami/latest.cel beside
// rules/ami/latest.rego) that computes the same violations: a list of
// {path, msg, fix, value} maps from o, the object judged, and prod, whether
// it is production. Everything else comes from the rule's METADATA, its
// one source of truth: the ID and default fix in the message, the kinds and
// operations the twin judges, whether it can be waived. Rules without a
// twin say why in custom.noTwin, which policies/README.md shows.
//
// NewSpec makes the policy's CEL: each twin is a variable and a
// validation whose message is what the webhook says, finding by finding
// (KG101 spec.amiSelectorTerms[0].alias: ... (fix: ...)), joined by " | ".
// Around each twin it writes what the webhook does around the rule:
// production judged from the old and the new object, waivers, the
// grandfathering of a denial the old object already had on UPDATE.
// Params makes the parameter objects from karpgate.yaml and the Karpenter
// release judged; there is one binding per action (deny, warn, audit),
// each with its own parameter object, and a twin applies through the
// binding whose action its rule has at admission. Build puts it all into
// the objects internal/webhookconfig defines.
//
// The twins share helpers, written @name(args), from rules/lib/lib.cel and
// generated.go; macro.go writes them out. The differential test in
// test/twins proves that each twin and its rule agree.
package twin
