package ci

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	"github.com/karpgate/karpgate/release"
	"github.com/karpgate/karpgate/test/gobuild"
)

// The snapshot release the tests of this package read: the release tests
// check it, the Action's test downloads it from a local server and the
// chart's test pushes it to a local registry. It is built once per test
// binary, for this machine's platform only: every platform goes through the
// same loop over Options.Platforms, and another one would compile every
// package again (minutes of CPU on a cold cache) to prove nothing this one
// does not. `make release` and the release workflow build them all.
var snapshot struct {
	once sync.Once
	opts release.Options
	a    release.Artifacts
	err  error
}

const (
	snapshotVersion = "v0.0.0-snapshot.e2e"
	snapshotCommit  = "0123456789abcdef0123456789abcdef01234567"
)

var snapshotDate = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// snapshotRelease returns the snapshot's options (Out is its folder) and
// artifacts, building it on first use.
func snapshotRelease(t *testing.T) (release.Options, release.Artifacts) {
	t.Helper()
	snapshot.once.Do(func() {
		root, err := crdsource.RepoRoot()
		if err != nil {
			snapshot.err = err
			return
		}
		host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
		if !slices.Contains(release.Platforms, host) {
			snapshot.err = fmt.Errorf("this machine's platform %v is not one a release ships for (%v)", host, release.Platforms)
			return
		}
		out, err := os.MkdirTemp("", "karpgate-release-snapshot-")
		if err != nil {
			snapshot.err = err
			return
		}
		snapshot.opts = release.Options{Version: snapshotVersion, Commit: snapshotCommit, Date: snapshotDate, Root: root, Out: out, Platforms: []release.Platform{host}}
		snapshot.a, snapshot.err = runRelease(snapshot.opts, gobuild.Command(t, "github.com/karpgate/karpgate/cmd/karpgate-dev"))
	})
	if snapshot.err != nil {
		t.Fatal(snapshot.err)
	}
	return snapshot.opts, snapshot.a
}

// cleanSnapshot deletes the snapshot's folder; TestMain calls it.
func cleanSnapshot() {
	if snapshot.opts.Out != "" {
		_ = os.RemoveAll(snapshot.opts.Out)
	}
}

// buildRelease builds a release into opts.Out as snapshotRelease does, for
// a test that needs one of its own.
func buildRelease(t *testing.T, opts release.Options) release.Artifacts {
	t.Helper()
	a, err := runRelease(opts, gobuild.Command(t, "github.com/karpgate/karpgate/cmd/karpgate-dev"))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// runRelease runs `karpgate-dev release` as `make release` does, in a
// process of its own: run inside this test binary, under the race
// detector, compressing and hashing the archives took minutes. It returns
// what the command wrote, read from the folder.
func runRelease(opts release.Options, dev string) (release.Artifacts, error) {
	args := []string{"release", "--version", opts.Version, "--commit", opts.Commit,
		"--date", strconv.FormatInt(opts.Date.Unix(), 10), "--out", opts.Out}
	for _, p := range opts.Platforms {
		args = append(args, "--platform", p.OS+"/"+p.Arch)
	}
	var a release.Artifacts
	cmd := exec.Command(dev, args...)
	cmd.Dir = opts.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return a, fmt.Errorf("karpgate-dev %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	for _, p := range opts.Platforms {
		archive := fmt.Sprintf("karpgate_%s_%s_%s.tar.gz", opts.Version, p.OS, p.Arch)
		a.Archives = append(a.Archives, archive)
		a.SBOMs = append(a.SBOMs, archive+".sbom.spdx.json")
	}
	entries, err := os.ReadDir(opts.Out)
	if err != nil {
		return a, err
	}
	var charts []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "karpgate-") && strings.HasSuffix(e.Name(), ".tgz") {
			charts = append(charts, e.Name())
		}
	}
	if len(charts) != 1 {
		return a, fmt.Errorf("charts written: %v, want one", charts)
	}
	a.Chart, a.Schema, a.Krew, a.Checksums = charts[0], "karpgate.schema.json", filepath.Join("krew", "karpgate.yaml"), "checksums.txt"
	for _, name := range slices.Concat(a.Archives, a.SBOMs, []string{a.Schema, a.Krew, a.Checksums}) {
		if _, err := os.Stat(filepath.Join(opts.Out, name)); err != nil {
			return a, fmt.Errorf("karpgate-dev release did not write %s: %w", name, err)
		}
	}
	return a, nil
}
