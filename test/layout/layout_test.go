// Package layout checks the repository's layering rules (issue 11), so that
// they hold after every change rather than when someone remembers to look.
package layout

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

const module = "github.com/karpgate/karpgate"

// repoFile reads a file of the repository by its path from the root.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	return goListIn(t, ".", args...)
}

// goListIn runs go list in dir, a folder of the repository (a module of
// its own under hack/, say).
func goListIn(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = filepath.Join(root, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The binary the Dockerfile ships links no test harness: not the testing
// package, not envtest, not the module checksum database the CRD source
// uses, and none of the project's test/ packages.
func TestShippedBinaryLinksNoTestHarness(t *testing.T) {
	for _, dep := range goList(t, "-deps", module+"/cmd/karpgate") {
		if dep == "testing" || strings.Contains(dep, "/envtest") || strings.Contains(dep, "/sumdb") || strings.HasPrefix(dep, module+"/test/") {
			t.Errorf("cmd/karpgate links %s", dep)
		}
	}
}

// internal/ holds leaf packages only: they import nothing of the project
// outside internal/, so layers point one way.
func TestInternalPackagesImportOnlyInternal(t *testing.T) {
	for _, line := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./internal/...") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module+"/") && !strings.HasPrefix(imp, module+"/internal/") {
				t.Errorf("%s imports %s", fields[0], imp)
			}
		}
	}
}

// maxLines bounds a non-test Go file: past it, a file holds more than one
// job and should be split.
const maxLines = 400

func TestNoSourceFileOverMaxLines(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		lines := 0
		for s := bufio.NewScanner(f); s.Scan(); {
			lines++
		}
		checked++
		if lines > maxLines {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines, over %d", rel, lines, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files found under %s", checked, root)
	}
}
