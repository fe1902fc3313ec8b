// Package ci holds the end-to-end tests of karpgate's CI and release
// integrations: pre-commit, the GitHub Action, the CI docs' commands, the
// kubectl plugin, the release snapshot, the chart in an OCI registry and
// the names the docs pin. They need no API server and
// spend their time compiling, so they run as a package of their own, beside
// test/e2e's API-server tests, which mostly wait.
package ci

import (
	"fmt"
	"os"
	"testing"

	"github.com/karpgate/karpgate/test/gobuild"
	"github.com/karpgate/karpgate/test/testenv"
)

func TestMain(m *testing.M) {
	cleanCache, err := testenv.IsolateKubectlCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanSnapshot()
	gobuild.Cleanup()
	cleanCache()
	os.Exit(code)
}

// buildKarpgate builds the shipped karpgate binary, once per test run.
func buildKarpgate(t *testing.T) string {
	t.Helper()
	return gobuild.Command(t, "github.com/karpgate/karpgate/cmd/karpgate")
}
