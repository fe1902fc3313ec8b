package guides

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/test/golden"
)

var (
	// guideBlock is a block a guide marks `<!-- guide: NAME -->`: a sh
	// block runs, any other is a file whose first line names its path
	// (`# eks-values.yaml`).
	guideBlock = regexp.MustCompile("(?s)<!-- guide: ([a-z-]+) -->\n```([a-z]*)\n(.*?)```")
	// outputBlock is what a guide shows a command printing, marked
	// `<!-- guide-output: NAME -->` after the command's block NAME.
	outputBlock = regexp.MustCompile("(?s)<!-- guide-output: ([a-z-]+) -->\n```\n(.*?)```")
	pathComment = regexp.MustCompile(`^# ([A-Za-z0-9_./-]+)\n`)
)

type block struct{ lang, body string }

// guide is one doc's marked blocks.
type guide struct {
	doc     string // docs/eks.md
	blocks  map[string]block
	outputs map[string]string
	ran     map[string]bool
}

func loadGuide(t *testing.T, root, doc string) *guide {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	g := &guide{doc: doc, blocks: map[string]block{}, outputs: map[string]string{}, ran: map[string]bool{}}
	for _, m := range guideBlock.FindAllStringSubmatch(string(data), -1) {
		if _, dup := g.blocks[m[1]]; dup {
			t.Fatalf("%s marks two blocks %s", doc, m[1])
		}
		g.blocks[m[1]] = block{lang: m[2], body: m[3]}
	}
	for _, m := range outputBlock.FindAllStringSubmatch(string(data), -1) {
		g.outputs[m[1]] = m[2]
	}
	if len(g.blocks) == 0 {
		t.Fatalf("%s marks no block <!-- guide: NAME -->", doc)
	}
	return g
}

// workspace is the folder a user runs the guides in, with the tools on
// PATH and the cluster in KUBECONFIG; publicRefs replaces what the guides
// fetch from the internet (ghcr.io, github.com) with the test's local
// registry and Git repository.
type workspace struct {
	dir        string
	env        []string
	publicRefs *strings.Replacer
}

// step runs block name of the guide: a sh block as bash from the
// workspace, whose standard output must be the golden file (and the
// guide's output block, when it shows one); another block is written to
// the file its first line names. It returns what a sh block printed.
func (g *guide) step(t *testing.T, w *workspace, name string) string {
	t.Helper()
	return g.stepExit(t, w, name, 0)
}

// stepExit is step for a command that exits with code: karpgate lint on a
// denial, say.
func (g *guide) stepExit(t *testing.T, w *workspace, name string, code int) string {
	t.Helper()
	b, ok := g.blocks[name]
	if !ok {
		t.Fatalf("%s has no block marked <!-- guide: %s -->", g.doc, name)
	}
	g.ran[name] = true
	if b.lang != "sh" {
		m := pathComment.FindStringSubmatch(b.body)
		if m == nil {
			t.Fatalf("%s block %s: a %s block starts with a comment naming its file (# path)", g.doc, name, b.lang)
		}
		path := filepath.Join(w.dir, filepath.FromSlash(m[1]))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(w.publicRefs.Replace(b.body)), 0o644); err != nil {
			t.Fatal(err)
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", w.publicRefs.Replace(b.body))
	cmd.Dir, cmd.Env = w.dir, w.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	got := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		got = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if got != code {
		t.Fatalf("%s block %s exited %d, want %d\n%s\nstdout:\n%s\nstderr:\n%s", g.doc, name, got, code, b.body, stdout.String(), stderr.String())
	}
	if shown, ok := g.outputs[name]; ok {
		goldenFile := filepath.Join("testdata", strings.TrimSuffix(filepath.Base(g.doc), ".md")+"-"+name+".golden")
		golden.Assert(t, goldenFile, stdout.Bytes())
		if want, _ := os.ReadFile(goldenFile); shown != string(want) {
			t.Errorf("%s shows for %s an output other than the command's (%s):\n--- shown\n%s\n--- golden\n%s", g.doc, name, goldenFile, shown, want)
		}
	}
	return stdout.String()
}

// checkAllRan fails t for a marked block no step ran and an output block
// that follows no command, so that nothing the guide shows goes untested.
func (g *guide) checkAllRan(t *testing.T) {
	t.Helper()
	var unrun []string
	for name := range g.blocks {
		if !g.ran[name] {
			unrun = append(unrun, name)
		}
	}
	for name := range g.outputs {
		if b, ok := g.blocks[name]; !ok || b.lang != "sh" {
			unrun = append(unrun, "output "+name)
		}
	}
	sort.Strings(unrun)
	if len(unrun) > 0 {
		t.Errorf("%s marks blocks no test runs: %v", g.doc, unrun)
	}
}
