package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// buildKarpgate builds the karpgate binary into the test's temporary folder.
func buildKarpgate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "karpgate")
	build := exec.Command("go", "build", "-o", bin, "github.com/karpgate/karpgate/cmd/karpgate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
