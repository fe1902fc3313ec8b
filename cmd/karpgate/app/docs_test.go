package app

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
	goldenfiles "github.com/karpgate/karpgate/test/golden"
)

// docFiles are the Markdown files whose output blocks are checked: the
// README and every page under docs/.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := goldenfiles.Glob(t, filepath.Join(root, "docs", "*.md"))
	return append([]string{filepath.Join(root, "README.md")}, files...)
}

// TestDocsOutputMatchesItsSource compares every output block of README.md
// and docs/ that says where it comes from with that source: a golden file,
// or the `$ karpgate` commands in it, run here. A block that shows a
// command's output (its first line starts with `$ `) must say where it
// comes from, so no output block can drift unnoticed.
func TestDocsOutputMatchesItsSource(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	for _, file := range docFiles(t, root) {
		rel, _ := filepath.Rel(root, file)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		blocks, errs := markdownBlocks(string(data))
		for _, err := range errs {
			t.Errorf("%s: %v", rel, err)
		}
		for _, b := range blocks {
			where := rel + ":" + strconv.Itoa(b.line)
			if b.source == "" {
				if len(b.lines) > 0 && strings.HasPrefix(b.lines[0], "$ ") {
					t.Errorf("%s: the block shows a command's output but not where it comes from: put `<!-- output: golden PATH -->`, `<!-- output: run -->` or `<!-- output: e2e TestName -->` on the line before it (docs/development.md, \"Output in the docs\")", where)
				}
				continue
			}
			kind, arg, _ := strings.Cut(b.source, " ")
			checked[kind]++
			switch kind {
			case "golden":
				checkGoldenBlock(t, root, where, arg, b.lines)
			case "run":
				dir := root
				if in, ok := strings.CutPrefix(arg, "in "); ok {
					dir = filepath.Join(root, filepath.FromSlash(in))
				} else if arg != "" {
					t.Errorf("%s: <!-- output: %s -->: write `run` or `run in DIR`", where, b.source)
					continue
				}
				checkRunBlock(t, dir, where, b.lines)
			case "e2e":
				if !testExists(t, root, arg) {
					t.Errorf("%s: <!-- output: %s -->: no func %s(t *testing.T) under test/", where, b.source, arg)
				}
			default:
				t.Errorf("%s: <!-- output: %s -->: unknown source %q; use golden, run or e2e", where, b.source, kind)
			}
		}
	}
	// A marker pattern that stopped matching would make this test pass on
	// anything.
	if checked["golden"] < 3 || checked["run"] < 5 {
		t.Errorf("only %v output blocks checked: is the marker pattern broken?", checked)
	}
}

// checkGoldenBlock compares a block with a golden file; `$ ` lines in the
// block are the command that produced it, and not in the file.
func checkGoldenBlock(t *testing.T, root, where, path string, block []string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	var output []string
	for _, l := range block {
		if !strings.HasPrefix(l, "$ ") {
			output = append(output, l)
		}
	}
	if diff := matchAbridged(output, strings.Split(string(want), "\n")); diff != "" {
		t.Errorf("%s differs from %s: %s", where, path, diff)
	}
}

// checkRunBlock runs each `$ karpgate ...` line of a block in dir and
// compares what it prints with the lines that follow it.
func checkRunBlock(t *testing.T, dir, where string, block []string) {
	t.Helper()
	type step struct {
		command string
		output  []string
	}
	var steps []step
	for _, l := range block {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{command: cmd})
			continue
		}
		if len(steps) == 0 {
			t.Errorf("%s: a `run` block starts with its first command, `$ karpgate ...`", where)
			return
		}
		steps[len(steps)-1].output = append(steps[len(steps)-1].output, l)
	}
	t.Chdir(dir)
	for _, s := range steps {
		got, err := runDocCommand(s.command)
		if err != nil {
			t.Errorf("%s: %s: %v", where, s.command, err)
			continue
		}
		if diff := matchAbridged(s.output, strings.Split(got, "\n")); diff != "" {
			t.Errorf("%s: `%s` prints something else: %s", where, s.command, diff)
		}
	}
}

// runDocCommand runs a karpgate command line as the docs write it, in
// process: a trailing `# comment` is not part of it, and `> FILE` sends
// standard output nowhere, so the block shows standard error alone.
func runDocCommand(line string) (string, error) {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0] != "karpgate" {
		return "", fmt.Errorf("only karpgate commands run here; mark the block `<!-- output: e2e TestName -->` if a cluster test shows it")
	}
	var combined bytes.Buffer
	var stdout io.Writer = &combined
	var args []string
	for i := 1; i < len(fields); i++ {
		switch f := fields[i]; {
		case f == ">" && i+1 < len(fields):
			stdout = io.Discard
			i++
		case strings.ContainsAny(f, "|<>'\"$"):
			return "", fmt.Errorf("%q: pipes, quotes and variables are not run here", f)
		default:
			args = append(args, f)
		}
	}
	Execute(args, strings.NewReader(""), stdout, &combined)
	return combined.String(), nil
}

// testExists reports whether a test function of that name is under test/.
func testExists(t *testing.T, root, name string) bool {
	t.Helper()
	if !regexp.MustCompile(`^Test[A-Za-z0-9_]+$`).MatchString(name) {
		return false
	}
	want := []byte("func " + name + "(t *testing.T)")
	found := false
	err := filepath.WalkDir(filepath.Join(root, "test"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		found = err == nil && bytes.Contains(data, want)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestMarkdownBlocks(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		wantBlocks int
		wantSource string
		wantErr    string
	}{
		{"closed", "text\n```\n$ karpgate x\n```\n", 1, "", ""},
		{"marked", "<!-- output: golden a/b.golden -->\n```\nx\n```\n", 1, "golden a/b.golden", ""},
		{"longer fence holds a shorter one", "````md\n```\nx\n```\n````\n", 1, "", ""},
		{"tilde fence ignores backticks", "~~~\n```\n~~~\n", 1, "", ""},
		{"never closed", "```\nx\n", 0, "", "line 1: code block never closed"},
		{"text after the closing fence", "```sh\nx\n``` A finding looks\nlike this:\n```\ny\n```\n", 1, "", "line 3: \"``` A finding looks\" does not close"},
		{"marker without a block", "<!-- output: run -->\ntext\n", 0, "", "line 1: an output comment must be followed"},
		{"inline triple backticks", "```x``` is not a fence\n", 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, errs := markdownBlocks(tt.doc)
			if len(blocks) != tt.wantBlocks {
				t.Errorf("%d blocks, want %d: %+v", len(blocks), tt.wantBlocks, blocks)
			}
			if tt.wantBlocks > 0 && len(blocks) > 0 && blocks[0].source != tt.wantSource {
				t.Errorf("source %q, want %q", blocks[0].source, tt.wantSource)
			}
			var got []string
			for _, err := range errs {
				got = append(got, err.Error())
			}
			switch {
			case tt.wantErr == "" && len(errs) > 0:
				t.Errorf("unexpected errors %q", got)
			case tt.wantErr != "" && !strings.Contains(strings.Join(got, "\n"), tt.wantErr):
				t.Errorf("errors %q, want one containing %q", got, tt.wantErr)
			}
		})
	}
}

func TestMatchAbridged(t *testing.T) {
	source := []string{"a", "b", "c", "d", "e", ""}
	tests := []struct {
		name  string
		block []string
		match bool
	}{
		{"whole", []string{"a", "b", "c", "d", "e"}, true},
		{"trailing blanks ignored", []string{"a ", "b", "c", "d", "e", ""}, true},
		{"one line changed", []string{"a", "b", "X", "d", "e"}, false},
		{"one line missing, unmarked", []string{"a", "b", "d", "e"}, false},
		{"one line missing, marked", []string{"a", "b", "...", "d", "e"}, true},
		{"indented marker", []string{"a", "  ...", "e"}, true},
		{"head only", []string{"a", "b", "..."}, true},
		{"tail only", []string{"...", "d", "e"}, true},
		{"middle only", []string{"...", "c", "..."}, true},
		{"head that is not the head", []string{"b", "..."}, false},
		{"tail that is not the tail", []string{"...", "d"}, false},
		{"out of order", []string{"...", "d", "...", "b", "..."}, false},
		{"a run split in the source", []string{"...", "b", "d", "..."}, false},
		{"a line the source lacks", []string{"a", "...", "z", "..."}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff := matchAbridged(tt.block, source)
			if (diff == "") != tt.match {
				t.Errorf("matchAbridged(%q) = %q, want match %v", tt.block, diff, tt.match)
			}
		})
	}
}

var (
	goModGo       = regexp.MustCompile(`(?m)^go (\S+)$`)
	makeToolchain = regexp.MustCompile(`(?m)^export GOTOOLCHAIN := (\S+)$`)
	// What the docs say about Go: the toolchain they export, and the
	// oldest Go that builds karpgate.
	docToolchain = regexp.MustCompile(`GOTOOLCHAIN=(go[0-9.]+)`)
	docMinimumGo = regexp.MustCompile(`(?:Go|needs Go) ([0-9]+\.[0-9]+(?:\.[0-9]+)?)(?:\s+or\s+later)?`)
)

// TestDocsStateTheGoVersions: the Go the docs ask for is go.mod's `go`
// line, and the toolchain they export is the Makefile's GOTOOLCHAIN.
func TestDocsStateTheGoVersions(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	minimum := goModGo.FindStringSubmatch(read("go.mod"))
	toolchain := makeToolchain.FindStringSubmatch(read("Makefile"))
	if minimum == nil || toolchain == nil {
		t.Fatalf("go.mod's go line %v or the Makefile's GOTOOLCHAIN %v not found", minimum, toolchain)
	}
	statements := 0
	for _, file := range docFiles(t, root) {
		rel, _ := filepath.Rel(root, file)
		// Prose only: a line joins the next, so a statement broken over
		// two lines is read whole.
		text := strings.Join(strings.Fields(read(rel)), " ")
		for _, m := range docToolchain.FindAllStringSubmatch(text, -1) {
			statements++
			if m[1] != toolchain[1] {
				t.Errorf("%s says GOTOOLCHAIN=%s; the Makefile exports %s", rel, m[1], toolchain[1])
			}
		}
		for _, m := range docMinimumGo.FindAllStringSubmatch(text, -1) {
			if !strings.HasSuffix(m[0], "or later") && !strings.HasPrefix(m[0], "needs") {
				continue // "Go 1.27.3" named for what it is, not as a requirement
			}
			statements++
			if m[1] != minimum[1] {
				t.Errorf("%s says %q; go.mod's go line, the oldest Go that builds karpgate, is %s", rel, m[0], minimum[1])
			}
		}
	}
	if statements < 4 {
		t.Errorf("only %d statements about Go found in the docs: did the patterns stop matching?", statements)
	}
}
