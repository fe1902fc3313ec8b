// Package budgetfuncs is karpgate's own Rego builtins,
// karpgate.budgets.problems and karpgate.budgets.analyze: what a
// NodePool's disruption budgets get wrong and what they allow, computed by
// budget/, so that a rule, `karpgate budgets` and the disruption
// controller read budgets one way.
//
// Their Cache remembers what they computed per list of budgets, shared by
// every evaluation of one engine: a repository's NodePools mostly share
// their budgets, and an admission webhook sees the same ones again and
// again.
package budgetfuncs
