// Package karpenterstack runs a real Karpenter on simulated nodes next to a
// control plane: kube-scheduler and kube-controller-manager (built by `make
// tools` from hack/harness), the kwok controller (hack/harness), which plays the
// kubelet of every simulated node, and Karpenter's kwok provider: Karpenter
// core with a cloud provider that creates Node objects instead of
// instances, at one of the releases in Releases (releases.go), each built
// from a build-only module (hack/harness, hack/karpenter-v1.0.8).
// `karpgate run` and the Karpenter end-to-end tests use it.
//
// Each component is a child process in its own process group, started in
// dependency order and checked healthy before Start returns; Stop ends them
// in reverse order and waits for them. On Linux a child is also killed when
// the process that started it dies, so an interrupted test or `make run`
// leaves nothing behind.
//
// Karpenter v1.0.8 runs with its own webhooks off: the CRDs' conversion
// stays pointed at karpgate, so every v1beta1 read or write Karpenter's
// clients cause goes through karpgate. Later releases serve only v1 and
// have no webhooks. The kwok Stages under stages/ are karpgate's
// own: nodes become Ready unless they carry the fault label (Fault), pods
// bound to a simulated node run, and deleted pods go away. Where kwok falls
// short of a kubelet, the stack fills in: a pod kwok lost track of is
// brought back to it after 30 seconds (resync.go), as a kubelet's periodic
// sync would.
package karpenterstack
