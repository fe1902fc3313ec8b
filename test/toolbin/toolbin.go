// Package toolbin finds the tools `make` builds from the Go module proxy
// (helm, promtool, etcdctl, budget-oracle) for tests: the path the Makefile exports, or
// else the newest version cached under the checkout's bin/, so `go test`
// works in a package after one `make <tool>`.
package toolbin

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// Find returns $env when it is set, or bin/<name>/<newest version>/<name>.
// Without either it fails t with the make target that builds the tool.
func Find(t testing.TB, env, name string) string {
	t.Helper()
	if path := os.Getenv(env); path != "" {
		return path
	}
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	found, err := filepath.Glob(filepath.Join(root, "bin", name, "*", name))
	if err != nil || len(found) == 0 {
		t.Fatalf("no %s under %s/bin/%s and $%s is unset: run `make %s` (make test builds it)", name, root, name, env, name)
	}
	sort.Strings(found)
	return found[len(found)-1]
}
