// Package karpentere2e checks karpgate against a real Karpenter: one local
// cluster per test run (kube-apiserver and etcd, karpgate serve with its
// rollout guard on, kube-scheduler, kube-controller-manager, kwok and
// Karpenter v1.0.8's kwok provider, as `karpgate run` starts them) that every
// test shares, each with NodePools of its own. The tests compare karpgate's
// allowed disruptions with Karpenter's own metric, hold a real bad rollout
// with the rollout guard, and provision from a v1beta1 NodePool through
// karpgate's conversion. BenchmarkScale (make scale) measures karpgate on
// 50 NodePools and 1,000 simulated nodes.
package karpentere2e
