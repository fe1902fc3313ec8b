package rewrite

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/manifest"
)

// render writes one source: untouched documents as they were, byte for
// byte, and changed ones re-encoded from their edited node trees.
func (r *Result) render(s *source) (File, error) {
	var out, original bytes.Buffer
	for _, d := range s.docs {
		original.Write(d.doc.Raw.Bytes)
		changed := len(d.inserts) > 0
		for _, o := range d.objects {
			changed = changed || !conversion.Equal(o.before, o.after)
		}
		if !changed {
			out.Write(d.doc.Raw.Bytes)
			continue
		}
		text, nodes, err := r.renderDocument(d)
		if err != nil {
			return File{}, err
		}
		out.Write(text)
		for _, c := range d.inserts {
			node := cloneNode(nodes[c.copyOf])
			before := c.before
			if len(c.borrowed) > 0 {
				// A borrowed block replaces the original's whole, comments
				// included, rather than being edited into it.
				before = runtime.DeepCopyJSON(before)
				for path := range c.borrowed {
					unstructured.RemoveNestedField(before, strings.Split(path, ".")...)
					if parent, err := walkTo(node, splitPath(path)[:len(splitPath(path))-1]); err == nil {
						deleteKey(parent, splitPath(path)[len(splitPath(path))-1])
					}
				}
			}
			r.Changes = append(r.Changes, Change{Source: s.name, Line: c.line(""), Object: c.ref(), Text: c.messages[""]})
			if err := applyEdits(node, diffEdits(before, c.after), c.borrowed); err != nil {
				return File{}, fmt.Errorf("%s: writing %s: %w", manifest.DisplayName(s.name), c.ref(), err)
			}
			text, err := encodeDocument(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{node}}, indentOf(d.doc.Raw.Bytes))
			if err != nil {
				return File{}, err
			}
			if err := verify(s.name, text, []*object{c}, true); err != nil {
				return File{}, err
			}
			if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
				out.WriteByte('\n')
			}
			out.WriteString("---\n")
			out.Write(text)
		}
	}
	return File{Source: s.name, Output: out.Bytes(), Changed: !bytes.Equal(out.Bytes(), original.Bytes())}, nil
}

// renderDocument edits a fresh parse of the document and encodes it. It
// returns the edited object nodes, from which split copies are made.
func (r *Result) renderDocument(d *document) ([]byte, map[*object]*yaml.Node, error) {
	name := manifest.DisplayName(d.source.name)
	var root yaml.Node
	if err := yaml.Unmarshal(d.doc.Raw.Bytes, &root); err != nil || len(root.Content) == 0 {
		return nil, nil, fmt.Errorf("%s:%d: re-reading the document: %w", name, d.doc.Raw.StartLine, err)
	}
	nodes := map[*object]*yaml.Node{}
	for _, o := range d.objects {
		node := root.Content[0]
		if o.src.Item >= 0 {
			items, err := walkTo(node, []any{"items", o.src.Item})
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", name, o.src.Ref(), err)
			}
			node = items
		}
		nodes[o] = node
		if sharesNodes(node) {
			return nil, nil, fmt.Errorf("%s: %s uses YAML anchors, aliases or merge keys, which an edit would change elsewhere too; convert it by hand", name, o.src.Ref())
		}
		edits := diffEdits(o.before, o.after)
		r.report(o, edits)
		if err := applyEdits(node, edits, o.borrowed); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", name, o.src.Ref(), err)
		}
	}
	if isJSON(d.doc.Raw.Bytes) {
		asJSON(&root)
	}
	text, err := encodeDocument(&root, indentOf(d.doc.Raw.Bytes))
	if err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", name, d.doc.Raw.StartLine, err)
	}
	if bytes.HasPrefix(d.doc.Raw.Bytes, []byte("---")) {
		text = append([]byte("---\n"), text...)
	}
	if err := verify(d.source.name, text, d.objects, false); err != nil {
		return nil, nil, err
	}
	return text, nodes, nil
}

// isJSON reports whether a document is written as JSON.
func isJSON(raw []byte) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

// asJSON styles a node tree so that it encodes as JSON again: added fields
// would otherwise come out as plain YAML inside a JSON document.
func asJSON(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		n.Style = yaml.FlowStyle
	case yaml.ScalarNode:
		if n.Tag == "!!str" {
			n.Style = yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		asJSON(c)
	}
}

// sharesNodes reports whether a node tree defines or uses shared nodes.
func sharesNodes(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode || n.Tag == "!!merge" {
		return true
	}
	for _, c := range n.Content {
		if sharesNodes(c) {
			return true
		}
	}
	return false
}

func encodeDocument(root *yaml.Node, indent int) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(indent)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// verify reads the written document back and checks that it holds exactly
// the converted objects: the YAML editing must never say something else.
func verify(source string, text []byte, objects []*object, copies bool) error {
	doc, err := manifest.ParseDocument(source, 0, manifest.RawDocument{Bytes: text, StartLine: 1})
	if err == nil {
		for _, o := range objects {
			item := -1
			if !copies {
				item = o.src.Item
			}
			found := false
			for _, got := range doc.Objects {
				if got.Item == item {
					found = true
					if !conversion.Equal(got.Content, o.after) {
						err = fmt.Errorf("%s does not match its conversion", o.ref())
					}
				}
			}
			if !found {
				err = fmt.Errorf("%s is missing", o.ref())
			}
		}
	}
	if err != nil {
		return fmt.Errorf("%s: internal error writing the converted YAML: %w; please report this with the input", manifest.DisplayName(source), err)
	}
	return nil
}

// indentOf guesses the indentation a document uses: its smallest indent.
func indentOf(raw []byte) int {
	indent := 0
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		n := len(line) - len(trimmed)
		if n == 0 || trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if indent == 0 || n < indent {
			indent = n
		}
	}
	if indent < 2 || indent > 8 {
		return 2
	}
	return indent
}

// splitPath splits a dotted path of plain map keys.
func splitPath(path string) []any {
	parts := strings.Split(path, ".")
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}
