// Package sandbox keeps a policy from reaching outside karpgate or taking
// it down. Whoever writes the policy folders (in a cluster, the
// karpgate-policies ConfigMap) decides what runs in karpgate's process, so
// every policy is compiled and evaluated through this package: lint,
// `karpgate verify` and both webhooks hold policies to the same bounds.
//
// It decides which OPA builtins a policy may call (nothing that reaches the
// network, reads the environment or local files, or makes output of no
// knowable size; every other builtin is in a cost class, classes.go, and
// one in none is refused), compiles policies with only those (Compile), and
// bounds each evaluation (Limits, Eval): the steps it takes, what one
// builtin call may make (sized before the call) and what its builtins make
// in all, checked as it runs, and its time. At the deadline the evaluation
// stops, and so does a call of a builtin that could otherwise run on for
// minutes (regular expressions and globs, stoppable.go): nothing an
// evaluation starts outlives it. A Pool, which the caller owns and shares
// among its engines, bounds how many evaluations run at once.
package sandbox
