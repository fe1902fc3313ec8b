// Package lint is `karpgate lint` as a library: it reads manifests through
// internal/manifest, indexes the Karpenter objects found for cross-object
// rules, and passes each object through a list of stages (stage.go): the
// API server's verdict from the CRDs (schema.go, on crdschema), which also
// hands the rules the object with the CRD's defaults, then the policy engine
// at the CI enforcement point. It returns a Report that locates every
// finding by file, line, column and field path. Output formats live in
// lint/output; the command in cmd/karpgate/app only wires flags to this
// package.
package lint
