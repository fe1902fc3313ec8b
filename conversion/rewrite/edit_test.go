package rewrite

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/manifest"
)

// editYAML applies the edits from before to after (both YAML) to before's
// own node tree and returns the written YAML.
func editYAML(t *testing.T, before, after string) (string, error) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(before), &root); err != nil {
		t.Fatal(err)
	}
	b := decode(t, before)
	a := decode(t, after)
	if err := applyEdits(root.Content[0], diffEdits(b, a), nil); err != nil {
		return "", err
	}
	out, err := encodeDocument(&root, indentOf([]byte(before)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out), nil
}

func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	d, err := manifest.ParseDocument("test", 0, manifest.RawDocument{Bytes: []byte(doc), StartLine: 1})
	if err != nil || len(d.Objects) != 1 {
		t.Fatalf("test YAML: %v", err)
	}
	return d.Objects[0].Content
}

func TestEditsKeepWhatTheyDoNotChange(t *testing.T) {
	tests := []struct {
		name, before, after, want string
	}{
		{"a quoted string stays quoted",
			"a: \"x\" # why\nb: 'y'\n", "a: z\nb: w\n",
			"a: \"z\" # why\nb: 'w'\n"},
		{"a plain string is quoted when it must be",
			"a: x\n", "a: \"true\"\n",
			"a: \"true\"\n"},
		{"a move carries the key's comments and the value's quoting",
			"from:\n  # keep me\n  k: \"v\"\n  other: 1\nto:\n  x: 1\n", "from:\n  other: 1\nto:\n  x: 1\n  k: v\n",
			"from:\n  other: 1\nto:\n  x: 1\n  # keep me\n  k: \"v\"\n"},
		{"a new key goes at the end of a flow mapping",
			"m: {a: 1}\n", "m: {a: 1, b: two}\n",
			"m: {a: 1, b: two}\n"},
		{"an item edit leaves the other items and their comments alone",
			"l:\n  - a: 1 # first\n  - a: 2 # second\n", "l:\n  - a: 1\n  - a: 3\n",
			"l:\n  - a: 1 # first\n  - a: 3 # second\n"},
		{"a list of another length is replaced whole",
			"l: [1, 2]\n", "l: [1, 2, 3]\n",
			"l: [1, 2, 3]\n"},
		{"four-space indentation is kept",
			"a:\n    b: 1\n    c: 2\n", "a:\n    b: 1\n",
			"a:\n    b: 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := editYAML(t, tt.before, tt.after)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestEditsRefuseAliases(t *testing.T) {
	_, err := editYAML(t, "base: &b {x: 1}\nuse: *b\n", "base: {x: 1}\nuse: {x: 2}\n")
	if err == nil || !strings.Contains(err.Error(), "alias") {
		t.Fatalf("editing through an alias would change base too; got %v", err)
	}
}

func TestUntouchedInputsAreByteForByte(t *testing.T) {
	input, err := os.ReadFile("../../internal/manifest/testdata/mixed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Convert(context.Background(), []string{"-"}, bytes.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Files[0]; f.Changed || !bytes.Equal(f.Output, input) || len(r.Changes) != 0 {
		t.Fatalf("an input without v1beta1 objects changed: %+v\n%s", r.Changes, f.Output)
	}
}

func TestAnchoredObjectsAreRefusedNotMangled(t *testing.T) {
	input := `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: anchored}
spec:
  disruption: &d
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    expireAfter: 720h
  template:
    metadata:
      annotations: {copy: *d}
    spec:
      nodeClassRef: {name: a, kind: EC2NodeClass}
      requirements: []
`
	_, err := Convert(context.Background(), []string{"-"}, strings.NewReader(input))
	if err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Fatalf("got %v, want a refusal that says to convert by hand", err)
	}
}

func TestIndentOf(t *testing.T) {
	for in, want := range map[string]int{
		"a:\n  b: 1\n":             2,
		"a:\n    b: 1\n":           4,
		"a:\n- b\n":                2,
		"# c\na:\n   # x\n   b:\n": 3,
		"a: 1\n":                   2,
	} {
		if got := indentOf([]byte(in)); got != want {
			t.Errorf("indentOf(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestJSONDocumentsStayJSON(t *testing.T) {
	input := `{"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "j"},
  "spec": {"disruption": {"expireAfter": "720h"}, "template": {"spec": {"nodeClassRef": {"name": "d"}, "requirements": []}}}}
`
	r, err := Convert(context.Background(), []string{"-"}, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Files[0].Output, &got); err != nil {
		t.Fatalf("a JSON input came out as something else: %v\n%s", err, r.Files[0].Output)
	}
	if got["apiVersion"] != "karpenter.sh/v1" || got["spec"].(map[string]any)["disruption"].(map[string]any)["consolidateAfter"] != "0s" {
		t.Fatalf("not converted: %s", r.Files[0].Output)
	}
}
