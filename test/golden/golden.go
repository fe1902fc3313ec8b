// Package golden compares test output with files checked in under testdata,
// and rewrites those files when tests run with -update. It is the one place
// that registers the -update flag, so any test binary may import it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Update reports whether the test run was asked to rewrite golden files.
func Update() bool { return *update }

// Assert fails t when got differs from the file at path, printing both; with
// -update it writes got to path first, so the run passes and the diff shows
// in version control.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it after you have checked the output):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Glob returns the files matching pattern and fails t when the pattern is
// malformed or matches nothing: a fixture glob left pointing at a folder
// that moved would otherwise make its test silently stop testing.
func Glob(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("glob %s: %v", pattern, err)
	}
	if len(files) == 0 {
		t.Fatalf("glob %s matches no file: has the folder moved?", pattern)
	}
	return files
}
