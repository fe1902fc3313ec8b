package manifest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseError is input that is not a readable manifest, with its position.
type ParseError struct {
	Source string
	Line   int
	Err    error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", DisplayName(e.Source), e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", DisplayName(e.Source), e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ParseStream reads the documents of one source in order and calls visit for
// each, including empty ones. It stops at the first parse error or at the
// first error visit returns.
func ParseStream(source string, r io.Reader, visit func(*Document) error) error {
	scanner := NewDocumentScanner(r)
	for index := 0; scanner.Scan(); index++ {
		doc, err := ParseDocument(source, index, scanner.Document())
		if err != nil {
			return err
		}
		if err := visit(doc); err != nil {
			return err
		}
	}
	if err := scanner.Err(); err != nil {
		return &ParseError{Source: source, Err: err}
	}
	return nil
}

// ParseDocument parses one raw document. Node positions are shifted so that
// they are lines of the whole source.
func ParseDocument(source string, index int, raw RawDocument) (*Document, error) {
	doc := &Document{Source: source, Index: index, Raw: raw}
	var root yaml.Node
	if err := yaml.Unmarshal(raw.Bytes, &root); err != nil {
		return nil, &ParseError{Source: source, Line: raw.StartLine, Err: fmt.Errorf("document %d: %w", index+1, err)}
	}
	if len(root.Content) == 0 {
		return doc, nil
	}
	shiftLines(&root, raw.StartLine-1)
	if err := CheckAliases(&root, 0); err != nil {
		ae := &AliasError{Position: Position{Line: raw.StartLine}}
		errors.As(err, &ae)
		return nil, &ParseError{Source: source, Line: ae.Line, Err: fmt.Errorf("document %d, column %d: %w", index+1, ae.Column, err)}
	}
	doc.Root = root.Content[0]
	if doc.Root.Kind == yaml.ScalarNode && doc.Root.Tag == "!!null" {
		doc.Root = nil
		return doc, nil
	}
	dec := &decoder{}
	value, err := dec.value(doc.Root, 0)
	if err != nil {
		return nil, &ParseError{Source: source, Line: raw.StartLine, Err: err}
	}
	content, ok := value.(map[string]any)
	if !ok {
		return nil, &ParseError{Source: source, Line: doc.Root.Line, Err: fmt.Errorf("document %d is a %s, not a Kubernetes object", index+1, kindName(doc.Root))}
	}
	if isList(content) {
		items := mappingValue(doc.Root, "items")
		if items == nil || items.Kind != yaml.SequenceNode {
			return nil, &ParseError{Source: source, Line: doc.Root.Line, Err: errors.New("kind List: items must be a list")}
		}
		for i, item := range items.Content {
			itemNode := resolveAlias(item)
			itemValue, _ := content["items"].([]any)[i].(map[string]any)
			if itemValue == nil {
				return nil, &ParseError{Source: source, Line: itemNode.Line, Err: fmt.Errorf("items[%d] is a %s, not a Kubernetes object", i, kindName(itemNode))}
			}
			doc.Objects = append(doc.Objects, &Object{Source: source, Document: index, Item: i, Node: itemNode, Content: itemValue, YAML11Booleans: dec.booleansUnder(IndexPath("items", i))})
		}
		return doc, nil
	}
	doc.Objects = []*Object{{Source: source, Document: index, Item: -1, Node: doc.Root, Content: content, YAML11Booleans: dec.booleans}}
	return doc, nil
}

// isList recognises `kind: List` and typed lists such as NodePoolList, which
// is what `kubectl get -o yaml` writes.
func isList(content map[string]any) bool {
	kind, _ := content["kind"].(string)
	_, hasItems := content["items"]
	return kind == "List" || (strings.HasSuffix(kind, "List") && hasItems)
}

func shiftLines(n *yaml.Node, by int) {
	if by == 0 || n == nil {
		return
	}
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	default:
		return "scalar"
	}
}

// mappingValue returns the value node under key in a mapping node, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolveAlias(n.Content[i+1])
		}
	}
	return nil
}

// decoder converts a node tree into the values kubectl would send: what
// encoding/json would produce from sigs.k8s.io/yaml's reading, keeping
// timestamps as the strings the author wrote (Kubernetes fields hold them
// as strings). It notes the YAML 1.1 booleans it reads on the way.
type decoder struct {
	booleans []YAML11Boolean
	// path is where the decoder is, written out only for a boolean it
	// notes: most documents have none, and every node would pay for it.
	path []PathSegment
}

const maxDepth = 10000

func (d *decoder) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nesting deeper than %d", n.Line, maxDepth)
	}
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i], n.Content[i+1]
			if key.Tag == "!!merge" {
				if err := d.mergeInto(out, value, depth); err != nil {
					return nil, err
				}
				continue
			}
			if key.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d column %d: a mapping key must be a string", key.Line, key.Column)
			}
			name, err := d.key(key)
			if err != nil {
				return nil, err
			}
			d.path = append(d.path, PathSegment{Key: name})
			v, err := d.value(value, depth+1)
			d.path = d.path[:len(d.path)-1]
			if err != nil {
				return nil, err
			}
			out[name] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			d.path = append(d.path, PathSegment{Index: i, IsIndex: true})
			v, err := d.value(c, depth+1)
			d.path = d.path[:len(d.path)-1]
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		if b, ok := yaml11Boolean(n); ok {
			d.note(n, FormatFieldPath(d.path), false, b)
			return b, nil
		}
		return scalarValue(n)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0], depth+1)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func (d *decoder) mergeInto(out map[string]any, value *yaml.Node, depth int) error {
	value = resolveAlias(value)
	sources := []*yaml.Node{value}
	if value.Kind == yaml.SequenceNode {
		sources = value.Content
	}
	for _, src := range sources {
		v, err := d.value(src, depth+1)
		if err != nil {
			return err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("line %d: a merge key must point at a mapping", src.Line)
		}
		for k, val := range m {
			if _, exists := out[k]; !exists {
				out[k] = val
			}
		}
	}
	return nil
}

func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil && u <= math.MaxInt64 {
			return int64(u), nil
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: integer %q out of range", n.Line, n.Value)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return f, nil
	case "!!binary":
		// kubectl sends the decoded bytes as a string.
		var s string
		if err := n.Decode(&s); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return s, nil
	default:
		// !!str, !!timestamp and custom tags keep their text.
		return n.Value, nil
	}
}
