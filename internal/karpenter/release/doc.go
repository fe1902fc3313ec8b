// Package release is the one place in karpgate that knows what each
// Karpenter release accepts and does: the budget reasons, consolidation
// policies and requirement operators its CRDs allow, the AMI alias families
// (and which of them may only follow @latest), the restricted label domains,
// the kinds and API versions it serves, static NodePools and do-not-disrupt
// durations, and which NodePool and EC2NodeClass fields its hash covers
// (a change drifts every node) or tags `hash:"ignore"`.
//
// The facts of every known release live in releases.json, a versioned table
// written by `make release-facts` (hack/releasefacts) from the module zips
// pinned under hack/releases/<version>: facts the CRDs state (enums, CEL
// rules) are read from each release's CRD YAML, facts only the Go types hold
// (hash tags, hash versions, the drift reasons of the AWS provider) from its
// Go source with go/parser. Nothing in the table is written by hand, and a
// test in hack/releasefacts fails when it is stale.
//
// The API, kept stable for its callers (lint, the webhook, the rules through
// policies, budget, preflight):
//
//   - Known lists the releases, oldest first; Newest is the last of them.
//   - Lookup finds a release by "v1.15", "1.15" or "v1.15.1": a minor names
//     its newest known patch; a version between known releases resolves to
//     the newest known release before it, with Exact false.
//   - SchemaFromCRDs reads the facts a CRD set states, so that the CRDs in
//     use (files, a cluster) decide what they state; Detect names the known
//     release whose CRDs state the same, or the closest.
//   - Facts answers the questions: AcceptsReason, AliasFamily,
//     Serves, HasKind, Hash (and Hash.Drifts for one field path), and so on.
//
// It imports nothing of karpgate outside internal/, so every layer may ask it.
package release
