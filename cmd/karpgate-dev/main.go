// Command karpgate-dev is karpgate plus the developer command `run`: a local
// kube-apiserver and etcd with the Karpenter CRDs and karpgate serve in
// process, for `make run` in a checkout.
//
// It is a separate binary so that the one the Dockerfile ships links no test
// harness: `run` needs envtest's process management, the pinned CRDs read
// from the Go module cache and a throwaway CA, none of which belongs in a
// release. Every other command is the shipped binary's own.
package main

import (
	"os"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
)

func main() {
	os.Exit(app.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, newRunCommand, newManifestsCommand))
}
