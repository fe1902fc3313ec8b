package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Tree is a set of generated files by slash-separated path relative to the
// manifests folder.
type Tree map[string][]byte

// Roots are the folders a Tree owns completely: Write removes any other file
// in them, and Diff reports it.
var Roots = []string{"base", "overlays/cert-manager", "charts/karpgate", MonitoringComponent, MonitoringOverlay, OpenReportsComponent, DashboardsDir}

// Paths lists the tree's files in order.
func (t Tree) Paths() []string {
	paths := make([]string, 0, len(t))
	for p := range t {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// Diff compares the tree with the files under dir and describes every file
// that is missing, different or no longer generated.
func (t Tree) Diff(dir string) ([]string, error) {
	var problems []string
	for _, p := range t.Paths() {
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, p+": missing")
		case err != nil:
			return nil, err
		case !bytes.Equal(have, t[p]):
			problems = append(problems, p+": differs from the generator's output")
		}
	}
	extra, err := t.extraFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range extra {
		problems = append(problems, p+": not generated any more")
	}
	return problems, nil
}

// Write writes the tree under dir and removes files in Roots it does not
// contain.
func (t Tree) Write(dir string) error {
	extra, err := t.extraFiles(dir)
	if err != nil {
		return err
	}
	for _, p := range extra {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return err
		}
	}
	for _, p := range t.Paths() {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, t[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (t Tree) extraFiles(dir string) ([]string, error) {
	var extra []string
	for _, root := range Roots {
		err := filepath.WalkDir(filepath.Join(dir, filepath.FromSlash(root)), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			if _, ok := t[filepath.ToSlash(rel)]; !ok {
				extra = append(extra, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", root, err)
		}
	}
	return extra, nil
}

// fileName is the file that holds the objects of one kind.
func fileName(kind string) string {
	return strings.ToLower(kind) + ".yaml"
}

// join puts folder and file together as a Tree path.
func join(elem ...string) string { return path.Join(elem...) }
