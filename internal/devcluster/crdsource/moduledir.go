package crdsource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/sumdb/dirhash"
)

// PinnedModuleDir returns the unpacked folder, in the Go module cache, of
// a module that a build-only module under hack/ requires (hack/conftest
// pins conftest, whose examples/ folder the conftest-compatibility tests
// read in place), at the version its go.mod names and checked against its
// go.sum. Tests read the folder; nothing is copied into the repository.
func PinnedModuleDir(ctx context.Context, hackModule, module string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "hack", hackModule)
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	mod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		return "", err
	}
	version := ""
	for _, r := range mod.Require {
		if r.Mod.Path == module {
			version = r.Mod.Version
		}
	}
	if version == "" {
		return "", fmt.Errorf("hack/%s/go.mod does not require %s", hackModule, module)
	}
	pin, err := readSum(filepath.Join(dir, "go.sum"), module, version)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %w %s %s", module, version, runErr, info.Error, stderr.String())
	}
	// The folder is what the tests read, so it is what is checked: a
	// module cache edited by hand must not pass for the pinned release.
	hash, err := dirhash.HashDir(info.Dir, module+"@"+version, dirhash.Hash1)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", info.Dir, err)
	}
	if hash != pin.Hash {
		return "", fmt.Errorf("%s hashes to %s, but hack/%s/go.sum pins %s", info.Dir, hash, hackModule, pin.Hash)
	}
	return info.Dir, nil
}
