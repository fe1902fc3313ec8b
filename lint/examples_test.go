package lint

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/karpgate/karpgate/test/golden"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// justifiedFile lists every finding on Karpenter's published examples, each
// followed by a "why:" line saying why it is right.
const justifiedFile = "testdata/karpenter-examples.justified"

// TestKarpenterExamples lints the examples Karpenter's maintainers publish
// with the release whose CRDs lint links
// (github.com/aws/karpenter-provider-aws/examples/v1, read from the module
// zip, never copied here), each file alone as a user would lint it, and
// compares the findings with a list in which every finding is justified. A
// false positive shows up as a finding nobody can justify.
func TestKarpenterExamples(t *testing.T) {
	files, err := crdsource.LinkedFiles(context.Background(), crdschema.LinkedModule, "examples/v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("only %d example files: wrong folder?", len(files))
	}
	engine := engineFor(t, config.Default())
	dir := t.TempDir()
	var got strings.Builder
	objects := 0
	for _, f := range files {
		p := filepath.Join(dir, path.Base(f.Name))
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		report, err := Run(context.Background(), Options{Inputs: []string{p}, Engine: engine, CRDs: linkedCRDs(t)})
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		objects += len(report.Objects)
		got.WriteString(describe(report))
	}
	if objects < 40 {
		t.Fatalf("only %d Karpenter objects in the examples", objects)
	}
	justified := readJustified(t)
	if goldenfile.Update() {
		writeJustified(t, got.String(), justified)
		justified = readJustified(t)
	}
	findings := strings.Split(strings.TrimSuffix(got.String(), "\n"), "\n")
	seen := map[string]bool{}
	for _, f := range findings {
		seen[f] = true
		why, listed := justified[f]
		switch {
		case !listed:
			t.Errorf("unjustified finding on Karpenter's examples (a false positive, or add it with a why: line to %s):\n%s", justifiedFile, f)
		case why == "" || strings.HasPrefix(why, "TODO"):
			t.Errorf("%s: no justification for\n%s", justifiedFile, f)
		}
	}
	for f := range justified {
		if !seen[f] {
			t.Errorf("%s lists a finding lint no longer reports (run -update after checking):\n%s", justifiedFile, f)
		}
	}
}

// readJustified maps each finding line to the "why:" line under it.
func readJustified(t *testing.T) map[string]string {
	t.Helper()
	file, err := os.Open(justifiedFile)
	if err != nil {
		t.Fatalf("%v (go test ./lint -run TestKarpenterExamples -update creates it)", err)
	}
	defer file.Close()
	out := map[string]string{}
	last := ""
	s := bufio.NewScanner(file)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		line := s.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "    why: "):
			out[last] = strings.TrimPrefix(line, "    why: ")
		default:
			last = line
			out[line] = ""
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeJustified rewrites the list for the current findings, keeping the
// justifications already written and marking new findings TODO, which the
// test refuses until someone explains them.
func writeJustified(t *testing.T, findings string, justified map[string]string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# Every finding of `karpgate lint` on Karpenter's published examples (examples/v1 of\n# %s %s, linted one file at a time with the default configuration),\n# each with why it is right. TestKarpenterExamples keeps this list exact.\n", crdschema.LinkedModule, crdschema.LinkedRelease)
	for _, f := range strings.Split(strings.TrimSuffix(findings, "\n"), "\n") {
		why := justified[f]
		if why == "" {
			why = "TODO: justify or fix the rule"
		}
		fmt.Fprintf(&b, "\n%s\n    why: %s\n", f, why)
	}
	if err := os.WriteFile(justifiedFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
