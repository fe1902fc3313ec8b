// Package verify runs Rego unit tests: the `test_` rules beside the
// built-in rules and in the user's --policy folders, as `karpgate verify`
// and `go test ./policies/...` run them. Tests are compiled and evaluated
// as the engine compiles and evaluates the rules (policies.TestSuite), with
// karpgate's restrictions and builtins, so a test passes here exactly when
// the rule it tests behaves so in lint and at admission; `opa test` knows
// neither. policies/testreport renders the results.
package verify
