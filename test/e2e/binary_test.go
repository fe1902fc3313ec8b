package e2e

import (
	"os/exec"
	"path"
	"path/filepath"
	"testing"
)

// buildKarpgate builds the shipped karpgate binary into the test's temporary
// folder.
func buildKarpgate(t *testing.T) string {
	t.Helper()
	return buildCommand(t, "github.com/karpgate/karpgate/cmd/karpgate")
}

// buildKarpgateDev builds karpgate-dev, the shipped commands plus `run`.
func buildKarpgateDev(t *testing.T) string {
	t.Helper()
	return buildCommand(t, "github.com/karpgate/karpgate/cmd/karpgate-dev")
}

func buildCommand(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), path.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
