package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// goldenMarker heads a fenced block that shows a golden file's content:
// `<!-- golden: test/testdata/admission/policy-denial.golden -->`.
var goldenMarker = regexp.MustCompile(`(?m)^<!-- golden: (\S+) -->\n` + "```" + `[a-z]*\n`)

// TestDocsShowTheirGoldenFiles keeps a block marked with a golden file the
// same as the file, which a test writes: docs show only output a test
// produced.
func TestDocsShowTheirGoldenFiles(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range sources(t, root, ".md", false) {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range goldenMarker.FindAllStringSubmatchIndex(text, -1) {
			golden := text[m[2]:m[3]]
			rest := text[m[1]:]
			end := strings.Index(rest, "```")
			if end < 0 {
				t.Errorf("%s: the block for %s is not closed", file, golden)
				continue
			}
			want, err := os.ReadFile(filepath.Join(root, golden))
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			if rest[:end] != string(want) {
				t.Errorf("%s: the block marked %s differs from the file; copy the file into it:\n%s", file, golden, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no document shows a golden file: is the marker still <!-- golden: PATH -->?")
	}
}
