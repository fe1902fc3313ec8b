// Package render writes the objects of package install as the files an
// operator applies: a kustomize base, a cert-manager overlay and a Helm chart
// (templates whose values default to the kustomize tree's content). It also
// compares a checked-in tree with what it would write, so a stale manifests/
// folder fails a test.
package render
