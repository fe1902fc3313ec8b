// Package readme writes policies/README.md from the rules' METADATA and
// the builtins' descriptions, so that the documentation of the built-in
// rules cannot disagree with them. TestReadmeIsUpToDate, beside the README
// in the policies package, fails when the committed file is stale.
package readme
