// Package lint is `karpgate lint` as a library: it streams manifests
// through internal/manifest and checks each Karpenter object on several
// goroutines (stream.go), through a list of stages (stage.go) and then the
// policy engine at the CI enforcement point; the cross-object rules run once
// the input is read (crossobject.go). SchemaStage (schema.go, on crdschema)
// is the API server's verdict from the CRDs, reported through the rules
// under policies/rules/schema; it hands later stages and the rules the
// object with the CRD's defaults, and a karpgate rule about the same field
// absorbs its finding (fold.go). Run returns a Report that locates every
// finding by file, line, column and field path. Output formats live in
// lint/output; the command in cmd/karpgate/app only wires flags to this
// package.
package lint
