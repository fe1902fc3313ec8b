// Package admission serves karpgate's validating and mutating admission
// webhooks for NodePools and EC2NodeClasses, and for NodeOverlays
// (karpenter.RuleOnlyKinds), which no built-in rule is about: the rules
// for every kind, users' own and the waiver rules, judge them as sent, as
// lint does, with no conversion. Both adapt an AdmissionReview
// to one policies.Engine evaluation at the admission enforcement point, with
// the old object on UPDATE, and hand the verdict back in the API server's
// terms:
//
//   - Validator: deny findings deny the request, one line per finding (rule
//     ID, field path, what is wrong, the fix); warn findings become admission
//     warnings, which kubectl prints; waived findings are listed as warnings
//     too, never dropped; audit findings are only counted (the audit of
//     stored objects reports them). A deny finding the old object already
//     had does not block an UPDATE (it is reported as a warning):
//     controllers adding a finalizer or an annotation must not be locked out
//     by a rule that arrived after the object. Rules see the request's user
//     (input.userInfo): KG006 judges who adds a waiver.
//   - A v1beta1 NodePool or EC2NodeClass is judged twice (stored.go): as
//     sent, and as the API server will store it, converted to v1 by the
//     conversion the conversion webhook runs, restore records included,
//     with the old object converted the same way, so that grandfathering
//     compares stored with stored. Either verdict denies;
//     a finding only the stored form has says so and where. A record of
//     karpgate.io/restore-v1 that would store a judged field the write
//     does not show is refused, naming the record (records.go).
//   - Mutator: findings that carry a JSON patch are mutations; it applies
//     them in rule order, answers with the combined patch, and reports each
//     one as a warning so the user sees what changed. An error admits the
//     object without them, because mutations are conveniences. Then, rules
//     or no rules, it keeps what karpgate owns on the object (keep.go): the
//     record of who set each waiver, and a NodePool's freeze or rollout
//     guard hold, which a GitOps apply of the NodePool's Git version would
//     otherwise drop (see guard.Keep), read from the stored object (a
//     v1beta1 old object converted back to v1). Its patches apply to the
//     object as sent; the validating webhook, called after it, judges the
//     patched object in both forms, so nothing it adds or a restore
//     record undoes reaches storage unjudged.
//
// Dry-run requests get the same verdict. The engine comes from an Engines
// source on every request, so a hot-reloaded configuration takes effect
// without dropping one. Decoding of the review is controller-runtime's; a
// malformed body gets a clear error response, never a panic.
package admission
