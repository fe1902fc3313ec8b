package e2e

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

// buildKarpgate builds the shipped karpgate binary, once per test run.
func buildKarpgate(t *testing.T) string {
	t.Helper()
	return buildCommand(t, "github.com/karpgate/karpgate/cmd/karpgate")
}

// buildKarpgateDev builds karpgate-dev, the shipped commands plus `run`,
// once per test run.
func buildKarpgateDev(t *testing.T) string {
	t.Helper()
	return buildCommand(t, "github.com/karpgate/karpgate/cmd/karpgate-dev")
}

// builds holds one build per package for the whole test binary: tests only
// run the binaries, so linking them again for every test would only cost
// time.
var builds sync.Map // package path -> *build

type build struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// buildCommand builds pkg as `make build` does (no cgo, -trimpath), so the
// compiled packages are the ones `make build` left in Go's build cache.
func buildCommand(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "karpgate-e2e-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, path.Base(pkg))
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.path, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, b.err, b.out)
	}
	return b.path
}

// removeBuilds deletes what buildCommand wrote; TestMain calls it.
func removeBuilds() {
	builds.Range(func(_, v any) bool {
		if b := v.(*build); b.path != "" {
			_ = os.RemoveAll(filepath.Dir(b.path))
		}
		return true
	})
}
