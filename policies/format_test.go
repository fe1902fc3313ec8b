package policies

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"

	"github.com/karpgate/karpgate/test/golden"
)

// TestRegoIsFormatted keeps the built-in rules as `opa fmt` writes them, so
// a diff shows what changed and not how it was spaced. `go test
// ./policies -run TestRegoIsFormatted -update` rewrites them.
func TestRegoIsFormatted(t *testing.T) {
	err := fs.WalkDir(builtinRules, "rules", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".rego" {
			return err
		}
		src, err := builtinRules.ReadFile(p)
		if err != nil {
			return err
		}
		formatted, err := format.SourceWithOpts(p, src, format.Opts{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		if bytes.Equal(src, formatted) {
			return nil
		}
		if golden.Update() {
			return os.WriteFile(p, formatted, 0o644)
		}
		t.Errorf("%s is not formatted as `opa fmt` would; run go test ./policies -run TestRegoIsFormatted -update", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
