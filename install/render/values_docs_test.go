package render

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// valuesTableRow is a row of docs/install.md's table of Helm values: its
// first cell names values in backticks, `a.b`, `.c` (a sibling of the one
// before) or `a.*` (a value and everything under it).
var valuesTableRow = regexp.MustCompile("^\\| (`[^|]*`) \\|")

// TestInstallGuideNamesEveryValue: every value of the chart's values.yaml
// is in docs/install.md's table, so a value added to the chart cannot go
// unexplained (the audit.* values once did).
func TestInstallGuideNamesEveryValue(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	inTable := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "| Value | Default |") {
			inTable = true
			continue
		}
		if !strings.HasPrefix(line, "|") {
			inTable = false
		}
		m := valuesTableRow.FindStringSubmatch(line)
		if !inTable || m == nil {
			continue
		}
		parent := ""
		for _, item := range strings.Split(m[1], ", ") {
			name := strings.Trim(item, "`")
			if strings.HasPrefix(name, ".") {
				name = parent + name
			}
			if i := strings.LastIndex(name, "."); i >= 0 {
				parent = name[:i]
			}
			named[strings.TrimSuffix(name, ".*")] = true
		}
	}
	docs := valueDocs()
	if len(named) < 10 {
		t.Fatalf("only %d values found in docs/install.md's table: did its format change?", len(named))
	}
	for key := range docs {
		if hasChild(docs, key) {
			continue // a group: its values are checked one by one
		}
		if !namedOrUnder(named, key) {
			t.Errorf("values.yaml has %s, which docs/install.md's table of values does not name", key)
		}
	}
	for name := range named {
		if _, ok := docs[name]; !ok {
			t.Errorf("docs/install.md's table of values names %s, which values.yaml does not have", name)
		}
	}
}

func hasChild(docs map[string]valueDoc, key string) bool {
	for k := range docs {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// namedOrUnder reports whether key, or a value it belongs to, is named.
func namedOrUnder(named map[string]bool, key string) bool {
	for {
		if named[key] {
			return true
		}
		i := strings.LastIndex(key, ".")
		if i < 0 {
			return false
		}
		key = key[:i]
	}
}
