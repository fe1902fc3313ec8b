// Package guides runs the guides for the paths users take as written:
// docs/eks.md, docs/gitops.md and docs/own-rules.md. Their marked commands
// run against one real API server holding the CRDs they create
// (cert-manager's, Argo CD's, Flux's, from the modules at pinned versions),
// helm installs from a real OCI registry, and karpgate's remote kustomize
// base comes from a local Git repository tagged as the release the guides
// pin. The outputs the guides show are this package's golden files.
package guides

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/karpgate/karpgate/test/gobuild"
	"github.com/karpgate/karpgate/test/testenv"
)

func TestMain(m *testing.M) {
	// The control plane's start logs through controller-runtime.
	ctrllog.SetLogger(logr.Discard())
	cleanCache, err := testenv.IsolateKubectlCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	gobuild.Cleanup()
	cleanCache()
	os.Exit(code)
}
