package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/karpgate/karpgate/policies"
)

// The sandbox is tested through the engine, which compiles and evaluates
// every policy with it: what matters is what a policy in a --policy folder
// can and cannot do.

// fixedNow is the clock of every test: Wednesday 5 June 2024, noon UTC.
var fixedNow = time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC)

func newTestEngine(t testing.TB, opts policies.Options) *policies.Engine {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	e, err := policies.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// userRule writes a one-rule policy folder whose violation holds when
// body does, and returns the folder.
func userRule(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	src := `# METADATA
# title: Expensive
# custom:
#   id: ACME900
#   severity: deny
#   kinds: [NodePool, EC2NodeClass]
package karpgate.rules.acme_expensive

violation contains {"msg": "expensive"} if {
	` + body + `
}
`
	if err := os.WriteFile(filepath.Join(dir, "expensive.rego"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
