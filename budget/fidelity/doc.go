// Package fidelity holds only tests. They ask Karpenter's own code the
// questions karpgate answers about disruption budgets, on random NodePools,
// and fail on any difference: the allowed disruptions of every reason at an
// instant, before nodes already disrupting are subtracted
// (NodePool.GetAllowedDisruptionsByReason; zero for every reason when it
// errors, as MustGetAllowedDisruptions reads it). Two releases answer:
//
//   - sigs.k8s.io/karpenter v1.15.0, linked into the test, with Unhealthy
//     among the reasons (go.mod replaces the v1.15.1 the AWS provider
//     requires: the Go module proxy does not serve that version's source);
//   - v1.0.8, which a binary cannot link beside v1.15, through the oracle
//     built from the build-only module hack/budget-oracle-v1.0.8 (`make
//     budget-oracle`), fed the same kind of cases as JSON.
//
// A seeded test reports how many instants agree, per reason; a fuzz target
// (FuzzAllowedMatchesKarpenterV1_15) looks for budgets they disagree on.
package fidelity
