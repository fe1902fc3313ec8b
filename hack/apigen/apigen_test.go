package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreUpToDate: the deepcopy functions and the CRD
// checked in are exactly what the API types generate; `make generate`
// rewrites them.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"api/karpgate/v1alpha1/zz_generated.deepcopy.go", CRDDir + "/karpgate.io_rolloutplans.yaml"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the generators wrote no %s (they wrote %d files)", want, len(files))
		}
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Errorf("%s: %v; run `make generate`", p, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run `make generate`", p)
		}
	}
}
