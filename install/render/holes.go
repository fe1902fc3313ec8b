package render

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A hole turns one place of a rendered object into Helm template text. The
// objects are built and encoded as usual; holes then swap values for
// template expressions, so the chart's content comes from the same typed
// objects as the kustomize tree.
type hole struct {
	kind string // the object kind the hole is in
	// name picks the object when the kind has several; empty for a kind
	// with one object.
	name string
	// path from the object's root: mapping keys; in a sequence, an index or
	// a text the wanted scalar item contains.
	path []string
	// Exactly one of the following.

	// inline replaces the value with template text on the same line.
	inline string
	// block replaces the value with template lines under the key; %d in
	// block is their indentation. blockHeader follows "key:" (" |" for a
	// literal string).
	block, blockHeader string
	// when keeps the entry or item, and everything under it, only when the
	// template condition holds.
	when string
	// add puts template lines into the mapping or sequence at path, at its
	// indentation.
	add string
}

// templater collects the edits holes make and applies them to the encoded
// text. Tokens are plain upper-case words, which YAML never quotes or folds.
type templater struct {
	n         int
	values    map[string]string // token -> expression, inside scalars
	lineEdits map[string]hole   // token -> the hole that rewrites its line
}

func newTemplater() *templater {
	return &templater{values: map[string]string{}, lineEdits: map[string]hole{}}
}

func (t *templater) newToken() string {
	t.n++
	return "HELMTOKEN" + strconv.Itoa(t.n) + "X"
}

// value returns a token that stands for expr inside string fields of the
// objects; scalars holding one are written double-quoted.
func (t *templater) value(expr string) string {
	tok := t.newToken()
	t.values[tok] = expr
	return tok
}

// dig applies h to the object node and returns the token finish must meet.
func (t *templater) dig(obj *yaml.Node, h hole) (string, error) {
	key, val, err := find(obj, h.path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", h.kind, strings.Join(h.path, "."), err)
	}
	tok := t.newToken()
	t.lineEdits[tok] = h
	switch {
	case h.inline != "" || h.block != "":
		*val = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok}
	case h.when != "":
		marked := val
		if key != nil {
			marked = key
		}
		marked.LineComment = tok
	case h.add != "":
		if val.Kind == yaml.MappingNode {
			val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"})
		} else {
			val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok})
		}
	default:
		return "", fmt.Errorf("%s %s: the hole says nothing to do", h.kind, strings.Join(h.path, "."))
	}
	return tok, nil
}

// find walks path from n to a value and its key (nil for a sequence item).
func find(n *yaml.Node, path []string) (key, val *yaml.Node, err error) {
	val = n
	for _, seg := range path {
		key = nil
		switch val.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(val.Content); i += 2 {
				if val.Content[i].Value == seg {
					key, next = val.Content[i], val.Content[i+1]
				}
			}
			if next == nil {
				return nil, nil, fmt.Errorf("no key %q", seg)
			}
			val = next
		case yaml.SequenceNode:
			var next *yaml.Node
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(val.Content) {
				next = val.Content[i]
			} else {
				for _, item := range val.Content {
					if item.Kind == yaml.ScalarNode && strings.Contains(item.Value, seg) {
						if next != nil {
							return nil, nil, fmt.Errorf("more than one item contains %q", seg)
						}
						next = item
					}
				}
			}
			if next == nil {
				return nil, nil, fmt.Errorf("no item %q", seg)
			}
			val = next
		default:
			return nil, nil, fmt.Errorf("%q is under a scalar", seg)
		}
	}
	return key, val, nil
}

// quoteValues makes every scalar that holds a value token double-quoted,
// so the expression's output stays one string whatever it contains.
func (t *templater) quoteValues(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		for tok := range t.values {
			if strings.Contains(n.Value, tok) {
				n.Style = yaml.DoubleQuotedStyle
			}
		}
	}
	for _, c := range n.Content {
		t.quoteValues(c)
	}
}

// finish rewrites encoded YAML into template text; every token in dug must
// have been met, so a hole never silently misses.
func (t *templater) finish(text string, dug []string) (string, error) {
	lines := strings.Split(text, "\n")
	var out []string
	used := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		tok, h, ok := t.lineEditIn(line)
		if !ok {
			out = append(out, line)
			continue
		}
		used[tok] = true
		indent := len(line) - len(strings.TrimLeft(line, " "))
		pad := strings.Repeat(" ", indent)
		switch {
		case h.inline != "":
			out = append(out, strings.Replace(line, tok, h.inline, 1))
		case h.block != "":
			head, _, _ := strings.Cut(line, tok)
			out = append(out, strings.TrimRight(head, " ")+h.blockHeader)
			child := indent + 2
			if strings.HasPrefix(strings.TrimLeft(line, " "), "- ") {
				child += 2
			}
			out = append(out, strings.Repeat(" ", child)+fmt.Sprintf(h.block, child))
		case h.when != "":
			end := i + 1
			for end < len(lines) && lines[end] != "" && len(lines[end])-len(strings.TrimLeft(lines[end], " ")) > indent {
				end++
			}
			out = append(out, pad+"{{- if "+h.when+" }}", strings.Replace(line, " # "+tok, "", 1))
			out = append(out, lines[i+1:end]...)
			out = append(out, pad+"{{- end }}")
			i = end - 1
		case h.add != "":
			// A sequence item's line starts at its dash, so the lines
			// take the same indentation in a mapping and in a sequence.
			for _, l := range strings.Split(strings.TrimSuffix(h.add, "\n"), "\n") {
				out = append(out, pad+l)
			}
		}
	}
	for _, tok := range dug {
		if h := t.lineEdits[tok]; !used[tok] {
			return "", fmt.Errorf("%s %s: the hole's token did not reach the output", h.kind, strings.Join(h.path, "."))
		}
	}
	result := strings.Join(out, "\n")
	for tok, expr := range t.values {
		result = strings.ReplaceAll(result, tok, expr)
	}
	if strings.Contains(result, "HELMTOKEN") {
		return "", fmt.Errorf("a template token was left in the output:\n%s", result)
	}
	return result, nil
}

func (t *templater) lineEditIn(line string) (string, hole, bool) {
	if !strings.Contains(line, "HELMTOKEN") {
		return "", hole{}, false
	}
	for tok, h := range t.lineEdits {
		if strings.Contains(line, tok) {
			return tok, h, true
		}
	}
	return "", hole{}, false
}
