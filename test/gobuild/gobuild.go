// Package gobuild builds the project's commands once per test binary, as
// `make build` does (no cgo, buildinfo.GoBuildFlags), so the packages
// compiled are the ones `make build` left in Go's build cache and only the
// link is new.
package gobuild

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"github.com/karpgate/karpgate/internal/buildinfo"
)

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

// Command builds pkg (an import path) on first use and returns the
// binary's path; a failed build fails t.
func Command(t testing.TB, pkg string) string {
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
		args := append(append([]string{"build"}, buildinfo.GoBuildFlags()...), "-o", b.path, pkg)
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, b.err, b.out)
	}
	return b.path
}

// Cleanup deletes what Command wrote; a TestMain calls it after m.Run.
func Cleanup() {
	builds.Range(func(_, v any) bool {
		if b := v.(*build); b.path != "" {
			_ = os.RemoveAll(filepath.Dir(b.path))
		}
		return true
	})
}
