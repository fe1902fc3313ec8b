package policywatch

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files are the content of everything a Watcher watches, read at once:
// what it fingerprints, and what it keeps as the last good policy.
type Files struct {
	// Config is karpgate.yaml; nil when there is no such file (the
	// built-in defaults).
	Config []byte `json:"config,omitempty"`
	// Policies and Data hold, per --policy and --data folder in order, its
	// files with paths relative to the folder.
	Policies [][]File `json:"policies,omitempty"`
	Data     [][]File `json:"data,omitempty"`
}

// File is one file of a folder.
type File struct {
	Path    string `json:"path"`
	Content []byte `json:"content"`
}

// readFiles reads what opts names. Folders are walked as the loaders walk
// them: hidden folders (a ConfigMap volume keeps its versions in
// ..<timestamp>) and symlinked folders (its ..data) are left out.
func readFiles(opts Options) (Files, error) {
	var out Files
	if opts.ConfigPath != "" {
		data, err := os.ReadFile(opts.ConfigPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Files{}, err
		default:
			out.Config = data
		}
	}
	var err error
	if out.Policies, err = readFolders(opts.PolicyDirs); err != nil {
		return Files{}, err
	}
	if out.Data, err = readFolders(opts.DataDirs); err != nil {
		return Files{}, err
	}
	return out, nil
}

func readFolders(dirs []string) ([][]File, error) {
	out := make([][]File, len(dirs))
	for i, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != dir && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case d.IsDir():
				return nil
			case d.Type()&fs.ModeSymlink != 0:
				if info, err := os.Stat(path); err == nil && info.IsDir() {
					return nil
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil || rel == "." {
				rel = filepath.Base(path) // --policy FILE
			}
			out[i] = append(out[i], File{Path: filepath.ToSlash(rel), Content: data})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", dir, err)
		}
	}
	return out, nil
}

// Sum fingerprints the files: their content and where each sits.
// Content, not modification times: a ConfigMap update swaps a symlink and
// keeps the files' own times.
func (f Files) Sum() [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "config\x00%t\x00%d\x00", f.Config != nil, len(f.Config))
	h.Write(f.Config)
	for _, group := range []struct {
		name  string
		files [][]File
	}{{"policy", f.Policies}, {"data", f.Data}} {
		for i, dir := range group.files {
			for _, file := range dir {
				fmt.Fprintf(h, "%s\x00%d\x00%s\x00%d\x00", group.name, i, file.Path, len(file.Content))
				h.Write(file.Content)
			}
		}
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// Restore writes the files under dir, each folder in a folder of its own,
// and returns opts pointing at them. A path that would leave its folder is
// refused: the files may come from a ConfigMap anyone with write access to
// karpgate's namespace could edit.
func (f Files) Restore(dir string, opts Options) (Options, error) {
	if err := os.RemoveAll(dir); err != nil {
		return opts, err
	}
	write := func(path string, content []byte) error {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		return os.WriteFile(path, content, 0o600)
	}
	opts.ConfigPath = filepath.Join(dir, "config", "karpgate.yaml")
	if f.Config != nil {
		if err := write(opts.ConfigPath, f.Config); err != nil {
			return opts, err
		}
	}
	folders := func(kind string, groups [][]File) ([]string, error) {
		var dirs []string
		for i, files := range groups {
			folder := filepath.Join(dir, kind, fmt.Sprint(i))
			if err := os.MkdirAll(folder, 0o700); err != nil {
				return nil, err
			}
			for _, file := range files {
				rel := filepath.FromSlash(file.Path)
				if !filepath.IsLocal(rel) {
					return nil, fmt.Errorf("the last good policy names the file %q outside its folder", file.Path)
				}
				if err := write(filepath.Join(folder, rel), file.Content); err != nil {
					return nil, err
				}
			}
			dirs = append(dirs, folder)
		}
		return dirs, nil
	}
	var err error
	if opts.PolicyDirs, err = folders("policies", f.Policies); err != nil {
		return opts, err
	}
	if opts.DataDirs, err = folders("data", f.Data); err != nil {
		return opts, err
	}
	return opts, nil
}
