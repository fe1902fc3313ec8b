// Package testreport renders the results of `karpgate verify` (the Rego
// unit tests of the built-in and user policies) as text, json or junit.
package testreport
