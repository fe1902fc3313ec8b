// Command benchpeers is `make bench-peers`: it generates a corpus of
// Karpenter manifests, runs karpgate lint, kubeconform (with JSON schemas
// generated from Karpenter's pinned CRDs at run time) and conftest (with the
// plain-Rego subset of karpgate's checks in conftest/) over it side by side,
// several times interleaved, and prints each tool's best wall time as a
// ratio against kubeconform's, its peak resident memory (the child's rusage
// maxrss) and how many objects it flagged.
//
// -karpgate-baseline adds another karpgate binary (an older build, say) to
// every run, so that a change is measured against its predecessor on the
// same machine in the same run.
package main
