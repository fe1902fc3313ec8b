// Package localcluster starts karpgate as a user meets it, on one machine:
// a real kube-apiserver and etcd with Karpenter v1.0.8's CRDs (v1beta1 and
// v1), a throwaway CA, `karpgate serve` in this process with the
// disruption loop, the CRDs' conversion pointed at it, and its validating
// and mutating webhook configurations registered. Start returns once a
// conversion and an admission request have gone through karpgate, so the
// first kubectl command a user types already meets it. With
// Options.Karpenter it then starts a real Karpenter on simulated nodes
// (package karpenterstack) and installs the KWOKNodeClass CRD, so that
// NodePools launch nodes and drift replaces them. `karpgate run` and the
// end-to-end tests use it.
package localcluster
