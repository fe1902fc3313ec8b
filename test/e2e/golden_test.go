package e2e

import (
	"path/filepath"
	"testing"

	goldenfile "github.com/karpgate/karpgate/test/golden"
)

// golden compares got with the file at test/testdata/<parts...>.
func golden(t *testing.T, got []byte, parts ...string) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join(append([]string{"..", "testdata"}, parts...)...), got)
}
