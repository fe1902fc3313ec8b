// Command karpgate-dev is karpgate plus two developer commands: `run`, a
// local kube-apiserver and etcd with the Karpenter CRDs and karpgate serve in
// process, for `make run` in a checkout; and `manifests`, the generator
// behind `make manifests`.
//
// It is a separate binary so that the one the Dockerfile ships links no test
// harness or generator: `run` needs envtest's process management, the pinned
// CRDs read from the Go module cache and a throwaway CA, and `manifests` the
// cert-manager and prometheus-operator API modules, none of which belongs in
// a release. Every other command is the shipped binary's own.
package main

import (
	"os"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
)

func main() {
	os.Exit(app.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, newRunCommand, newManifestsCommand, newReleaseCommand))
}
