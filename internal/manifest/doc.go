// Package manifest reads Kubernetes manifests the way CI tools meet them:
// files, folders (recursively) and standard input, each holding one or more
// YAML or JSON documents, with `kind: List` expanded into its items.
//
// Every object keeps its yaml.v3 node tree, so callers can report the file,
// line and column of any field path, and the exact bytes of the document it
// came from, so that rewriting tools can leave untouched documents byte for
// byte as they were. Lint, convert and budgets all read input through here.
package manifest
