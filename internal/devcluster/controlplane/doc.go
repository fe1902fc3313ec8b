// Package controlplane starts a real kube-apiserver and etcd (through
// controller-runtime's envtest) with a chosen set of CRDs, writes a
// kubeconfig, and runs the real kubectl against it. Tests use it through
// test/testenv; `karpgate-dev run` uses it for a local cluster.
//
// The binaries are built from source by `make tools` (see hack/harness), never
// downloaded; their folder comes from Options.AssetsDir or KUBEBUILDER_ASSETS.
package controlplane
