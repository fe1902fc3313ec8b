// Package localcluster starts karpgate as a user meets it, on one machine:
// a real kube-apiserver and etcd with the CRDs of a Karpenter release
// (Options.Release: v1.15.1's, v1 only, by default; v1.0.8's serve v1beta1
// and v1), a throwaway CA, `karpgate serve` in this process with the
// disruption loop, for v1.0.8 the CRDs' conversion pointed at it, and its
// validating and mutating webhook configurations registered. Start returns
// once an admission request (and a conversion, for v1.0.8) has gone
// through karpgate, so the first kubectl command a user types already
// meets it. With Options.Karpenter it then starts that release of
// Karpenter on simulated nodes (package karpenterstack) and installs its
// KWOKNodeClass CRD, so that NodePools launch nodes and drift replaces
// them. `karpgate run` and the end-to-end tests use it.
package localcluster
