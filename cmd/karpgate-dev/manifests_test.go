package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/cmd/karpgate/app"
)

func TestManifests(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	deployment := filepath.Join(dir, "base", "deployment.yaml")
	// The generator writes what the repository's manifests/ holds (a test
	// in install/render keeps that folder up to date), so its count is the want.
	files := fmt.Sprintf("%d files", countFiles(t, filepath.Join("..", "..", "manifests")))
	tests := []struct {
		name     string
		before   func(t *testing.T)
		args     []string
		wantCode int
		want     string // in stdout for exit 0, in stderr otherwise
	}{
		{"check before writing", nil, []string{"manifests", "--out", dir, "--check"}, 1, "base/deployment.yaml: missing"},
		{"write", nil, []string{"manifests", "--out", dir}, app.ExitOK, "wrote " + files + " under " + dir},
		{"check after writing", nil, []string{"manifests", "--out", dir, "--check"}, app.ExitOK, "is up to date (" + files + ")"},
		{"check after a hand edit", func(t *testing.T) {
			if err := os.WriteFile(deployment, []byte("replicas: 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"manifests", "--out", dir, "--check"}, 1, "is stale; run `make manifests`:\n  base/deployment.yaml: differs"},
		{"write repairs it", nil, []string{"manifests", "--out", dir}, app.ExitOK, "wrote " + files},
		{"no folder", nil, []string{"manifests", "--out", ""}, app.ExitUsage, "--out is empty"},
		{"arguments", nil, []string{"manifests", "extra"}, app.ExitUsage, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before(t)
			}
			var stdout, stderr bytes.Buffer
			code := app.Execute(tt.args, strings.NewReader(""), &stdout, &stderr, newManifestsCommand)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			got := stdout.String()
			if code != app.ExitOK {
				got = stderr.String()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("output %q lacks %q", got, tt.want)
			}
		})
	}
}

// countFiles counts the regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil || n == 0 {
		t.Fatalf("counting the files under %s: %d, %v", dir, n, err)
	}
	return n
}
