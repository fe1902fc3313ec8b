package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// repoPathPattern finds what reads as a path inside this repository: two or
// more slash-separated names (or one name and a slash) not preceded by a
// path character, so neither github.com/x/y nor ../x starts a match. Whether
// the first name is one of the repository's top-level entries decides if it
// is ours (pathsIn).
var repoPathPattern = regexp.MustCompile(`(?:^|[^\w./~-])((?:[\w.*-]+/)+[\w.*-]*)`)

// sources lists the repository's files with the given suffix, relative to
// root, skipping bin/, hidden folders and (unless withTestdata) testdata/,
// whose files are inputs, not documentation.
func sources(t *testing.T, root, suffix string, withTestdata bool) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".") || (!withTestdata && d.Name() == "testdata")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, suffix) {
			rel, _ := filepath.Rel(root, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// topLevel lists the repository's top-level entries, bin/ (build output)
// left out.
func topLevel(t *testing.T, root string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		if e.Name() != "bin" && !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	return top
}

// pathsIn returns the repository paths text names.
func pathsIn(text string, top map[string]bool) []string {
	var paths []string
	for _, m := range repoPathPattern.FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], ".")
		first, _, _ := strings.Cut(p, "/")
		if top[first] {
			paths = append(paths, p)
		}
	}
	return paths
}

// exists reports whether a repository path, possibly a glob, names
// something in the checkout.
func exists(root, path string) bool {
	full := filepath.Join(root, filepath.FromSlash(path))
	if strings.ContainsAny(path, "*?[") {
		matches, err := filepath.Glob(full)
		return err == nil && len(matches) > 0
	}
	_, err := os.Stat(full)
	return err == nil
}

func TestPathsInCommentsExist(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	top := topLevel(t, root)
	checked := 0
	for _, file := range sources(t, root, ".go", false) {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range f.Comments {
			for _, p := range pathsIn(group.Text(), top) {
				checked++
				if !exists(root, p) {
					t.Errorf("%s: a comment names %s, which does not exist", file, p)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d paths found in comments: is the pattern broken?", checked)
	}
}

// outsideCodeBlocks drops a Markdown file's fenced code blocks: the paths
// in commands (a folder the reader creates, say) need not exist yet.
func outsideCodeBlocks(doc string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestPathsInDocsExist(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	top := topLevel(t, root)
	checked := 0
	for _, file := range sources(t, root, ".md", false) {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pathsIn(outsideCodeBlocks(string(data)), top) {
			checked++
			if !exists(root, p) {
				t.Errorf("%s names %s, which does not exist", file, p)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d paths found in docs: is the pattern broken?", checked)
	}
}

// A test reads its fixtures by a path relative to its folder; one that
// names a testdata path that is gone reads nothing (a glob) or fails late.
func TestTestdataPathsInTestsExist(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range sources(t, root, "_test.go", false) {
		if strings.HasPrefix(file, "test/layout/") {
			continue // its own examples and checks
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			// Paths into the test's own folder may name a file that is
			// missing on purpose; one that leaves the folder (../) or a
			// glob is a fixture some other folder must still hold.
			if err != nil || !strings.Contains(s, "testdata/") || strings.ContainsAny(s, "%\n :=") ||
				(!strings.HasPrefix(s, "../") && !strings.ContainsAny(s, "*?")) {
				return true
			}
			checked++
			rel := filepath.ToSlash(filepath.Join(filepath.Dir(file), s))
			if !exists(root, rel) {
				t.Errorf("%s names %s (%s from the repository's root), which does not exist", file, s, rel)
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("only %d testdata paths found in tests: is the search broken?", checked)
	}
}

// Fixture globs go through golden.Glob, which fails a test whose glob
// matches nothing; filepath.Glob would return no files and no error.
func TestTestsGlobThroughGolden(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range sources(t, root, "_test.go", false) {
		if strings.HasPrefix(file, "test/layout/") {
			continue // it globs to check that paths exist
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Glob" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "filepath" {
					t.Errorf("%s calls filepath.Glob: use golden.Glob, which fails when nothing matches", file)
				}
			}
			return true
		})
	}
}

func TestRepoPathPattern(t *testing.T) {
	top := map[string]bool{"policies": true, "cmd": true, "README.md": true, "test": true}
	tests := []struct {
		text string
		want []string
	}{
		{"see policies/rules/ami.rego.", []string{"policies/rules/ami.rego"}},
		{"`cmd/karpgate/app` and policies/testdata/rules/KG*/", []string{"cmd/karpgate/app", "policies/testdata/rules/KG*/"}},
		{"github.com/karpgate/karpgate/cmd/x and ../cmd/x and sigs.k8s.io/kwok/cmd/kwok", nil},
		{"pkg/controllers/disruption/helpers.go is Karpenter's", nil},
		{"the test/ folder, and testing/quick", []string{"test/"}},
	}
	for _, tt := range tests {
		got := pathsIn(tt.text, top)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("pathsIn(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
