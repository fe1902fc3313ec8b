package e2e

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under test/testdata")

// golden compares got with the file at test/testdata/<parts...>, or rewrites
// it with -update.
func golden(t *testing.T, got []byte, parts ...string) {
	t.Helper()
	path := filepath.Join(append([]string{"..", "testdata"}, parts...)...)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
