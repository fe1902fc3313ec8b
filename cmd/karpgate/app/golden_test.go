package app

import (
	"path/filepath"
	"testing"

	goldenfile "github.com/karpgate/karpgate/test/golden"
)

// golden compares got with testdata/<path>; go test -update rewrites it.
func golden(t *testing.T, path, got string) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", path), []byte(got))
}
