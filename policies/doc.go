// Package policies is karpgate's policy engine: the built-in Karpenter rule
// set written in Rego (embedded under rules/), any user policies and data,
// compiled once into a single prepared query that every caller shares.
//
// The lint command evaluates it per object in CI; the admission webhook
// evaluates it per request. Both pass a Request (the object, the old object
// on UPDATE, the operation, the enforcement point and, offline, an Inventory
// of the other objects in the input) and get back structured findings: rule
// ID, title, action, message, field path, fix and waiver status.
//
// Rules are Rego v1 packages under data.karpgate.rules, one rule per
// package, whose METADATA annotation is the rule's one source of truth (ID,
// title, severity, kinds, fix); see Catalog and README.md. Policies run with
// restricted capabilities: nothing can reach the network or read the
// environment, and Karpenter's cron and budget semantics come from Go
// builtins backed by the budget package.
//
// This package is the API its callers import: loading, the Engine,
// evaluation and findings. The jobs behind it live in sub-packages that
// do not import it: sandbox (what a policy may call and what an
// evaluation may cost), budgetfuncs (the karpgate.budgets.* builtins and
// their cache) and memo (evaluating a rule once per distinct value of the
// fields it reads). Those that build on it sit beside it: verify (the Rego
// test runner of `karpgate verify`), testreport, readme (README.md) and
// policywatch (reloading the engine when its files change).
package policies
