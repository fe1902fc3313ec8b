package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDocumentScannerSplitsAtColumnZeroMarkers(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		docs  []string
		lines []int
	}{
		{"single", "a: 1\n", []string{"a: 1\n"}, []int{1}},
		{"leading marker", "---\na: 1\n", []string{"---\na: 1\n"}, []int{1}},
		{"two", "a: 1\n---\nb: 2\n", []string{"a: 1\n", "---\nb: 2\n"}, []int{1, 2}},
		{"marker with content", "a: 1\n--- {b: 2}\n", []string{"a: 1\n", "--- {b: 2}\n"}, []int{1, 2}},
		{"indented dashes stay", "a: |\n  ---\n  x\n", []string{"a: |\n  ---\n  x\n"}, []int{1}},
		{"not a marker", "a: 1\n----\n", []string{"a: 1\n----\n"}, []int{1}},
		{"no trailing newline", "a: 1\n---\nb: 2", []string{"a: 1\n", "---\nb: 2"}, []int{1, 2}},
		{"empty", "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewDocumentScanner(strings.NewReader(tt.in))
			var docs []string
			var lines []int
			for s.Scan() {
				docs = append(docs, string(s.Document().Bytes))
				lines = append(lines, s.Document().StartLine)
			}
			if s.Err() != nil {
				t.Fatal(s.Err())
			}
			if !reflect.DeepEqual(docs, tt.docs) || !reflect.DeepEqual(lines, tt.lines) {
				t.Fatalf("got %q at %v, want %q at %v", docs, lines, tt.docs, tt.lines)
			}
			if strings.Join(docs, "") != tt.in {
				t.Fatalf("documents do not add up to the input byte for byte")
			}
		})
	}
}

func TestParseMixedFile(t *testing.T) {
	var docs []*Document
	err := Walk([]string{"testdata/mixed.yaml"}, nil, func(d *Document) error {
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("want 3 documents (one empty), got %d", len(docs))
	}
	if len(docs[1].Objects) != 0 {
		t.Fatalf("empty document yielded objects")
	}
	pool := docs[0].Objects[0]
	if pool.Kind() != "NodePool" || pool.Name() != "default" || pool.APIVersion() != "karpenter.sh/v1" {
		t.Fatalf("unexpected object %s", pool.Ref())
	}
	list := docs[2].Objects
	if len(list) != 2 || list[0].Item != 0 || list[1].Item != 1 {
		t.Fatalf("List not expanded: %+v", list)
	}
	ts := list[0].Content["metadata"].(map[string]any)["creationTimestamp"]
	if ts != "2024-01-02T03:04:05Z" {
		t.Fatalf("timestamp not kept as written: %#v", ts)
	}
	count := list[1].Content["data"].(map[string]any)["count"]
	if count != int64(3) {
		t.Fatalf("ints must decode as int64 for unstructured use, got %#v", count)
	}
	if got := list[0].Position("metadata.name"); got.Line != 20 {
		t.Fatalf("List item positions must be file lines: %+v", got)
	}
}

func TestPositionOfFieldPaths(t *testing.T) {
	objects, err := ReadAll([]string{"testdata/mixed.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := objects[0]
	tests := []struct {
		path string
		want Position
	}{
		{"spec.disruption.budgets[1].schedule", Position{Line: 11, Column: 9}},
		{"spec.disruption.budgets[1]", Position{Line: 10, Column: 9}},
		{"spec.disruption.budgets[0].nodes", Position{Line: 9, Column: 9}},
		// Missing fields point at the deepest part that exists.
		{"spec.disruption.budgets[1].duration", Position{Line: 10, Column: 9}},
		{"spec.template.spec.nodeClassRef", Position{Line: 6, Column: 1}},
		{"metadata.annotations[karpgate.io/waive-KG101]", Position{Line: 4, Column: 1}},
		{"", Position{Line: 2, Column: 1}},
	}
	for _, tt := range tests {
		if got := pool.Position(tt.path); got != tt.want {
			t.Errorf("Position(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
	}
}

func TestParseFieldPath(t *testing.T) {
	got := ParseFieldPath("metadata.annotations[a.b/c].x[2]")
	want := []PathSegment{{Key: "metadata"}, {Key: "annotations"}, {Key: "a.b/c"}, {Key: "x"}, {Index: 2, IsIndex: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v want %+v", got, want)
	}
}

func TestErrorsNameSourceAndLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bad yaml", "a: 1\n---\nb: [\n", "<stdin>:2: document 2"},
		{"scalar document", "just text\n", "is a scalar, not a Kubernetes object"},
		{"non-string key", "? [a]\n: 1\n", "mapping key must be a string"},
		{"bad list", "kind: List\nitems: 3\n", "items must be a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Walk([]string{"-"}, strings.NewReader(tt.in), func(*Document) error { return nil })
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ParseError containing %q", err, tt.want)
			}
		})
	}
}

func TestExpandInputsWalksFoldersSorted(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.yaml", "a.yml", "c.json", "notes.txt", ".git/x.yaml", "sub/d.yaml"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ExpandInputs([]string{dir, "-"})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, p := range got {
		r, _ := filepath.Rel(dir, p)
		if p == "-" {
			r = "-"
		}
		rel = append(rel, r)
	}
	want := []string{"a.yml", "b.yaml", "c.json", "sub/d.yaml", "-"}
	if !reflect.DeepEqual(rel, want) {
		t.Fatalf("got %v want %v", rel, want)
	}
	if _, err := ExpandInputs([]string{filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing input must be named, got %v", err)
	}
}

func TestJSONInput(t *testing.T) {
	in := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"j"},"spec":{"weight":10}}`
	objects, err := ReadAll([]string{"-"}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 1 || objects[0].Name() != "j" || objects[0].Content["spec"].(map[string]any)["weight"] != int64(10) {
		t.Fatalf("unexpected %+v", objects)
	}
	if p := objects[0].Position("spec.weight"); p.Line != 1 || p.Column < 60 {
		t.Fatalf("JSON positions: %+v", p)
	}
}

func TestFieldPathsRoundTrip(t *testing.T) {
	for _, path := range []string{
		"spec.disruption.budgets[1].schedule",
		"metadata.annotations[karpenter.sh/nodepool-hash]",
		"spec.tags[kubernetes.io/cluster/demo]",
		"items[0]",
		"spec",
		"",
	} {
		if got := FormatFieldPath(ParseFieldPath(path)); got != path {
			t.Errorf("%q comes back as %q", path, got)
		}
	}
	if got := IndexPath(ChildPath(ChildPath("", "spec"), "a.b"), 2); got != "spec[a.b][2]" {
		t.Errorf("got %q", got)
	}
}
