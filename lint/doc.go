// Package lint is `karpgate lint` as a library: it reads manifests through
// internal/manifest, indexes the Karpenter objects found for cross-object
// rules, evaluates each object with the policy engine at the CI enforcement
// point, and returns a Report that locates every finding by file, line,
// column and field path. Output formats live in lint/output; the command in
// internal/cli only wires flags to this package.
package lint
