// Package admission serves karpgate's validating and mutating admission
// webhooks for NodePools and EC2NodeClasses. Both adapt an AdmissionReview
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
//   - Mutator: findings that carry a JSON patch are mutations; it applies
//     them in rule order, answers with the combined patch, and reports each
//     one as a warning so the user sees what changed. An error admits the
//     object without them, because mutations are conveniences. Then, rules
//     or no rules, it keeps what karpgate owns on the object (keep.go): the
//     record of who set each waiver, and a NodePool's freeze or rollout
//     guard hold, which a GitOps apply of the NodePool's Git version would
//     otherwise drop (see guard.Keep).
//
// Dry-run requests get the same verdict. The engine comes from an Engines
// source on every request, so a hot-reloaded configuration takes effect
// without dropping one. Decoding of the review is controller-runtime's; a
// malformed body gets a clear error response, never a panic.
package admission
