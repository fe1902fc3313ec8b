package lint

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/manifest"
)

// defaultComment marks a field the CRD's defaults filled in.
const defaultComment = "default"

// storedNode renders the object as the API server would store it. Fields
// keep the order the author wrote them in (written may be nil, or the node
// of another version, when nothing lines up); fields the CRD defaulted come
// after them, marked with a comment.
func storedNode(written *yaml.Node, stored map[string]any, defaults []string) *yaml.Node {
	r := storedRenderer{defaults: map[string]bool{}}
	for _, d := range defaults {
		r.defaults[d] = true
	}
	return r.node("", written, stored)
}

type storedRenderer struct {
	defaults map[string]bool
}

func (r storedRenderer) node(path string, written *yaml.Node, v any) *yaml.Node {
	for written != nil && written.Kind == yaml.AliasNode {
		written = written.Alias
	}
	switch x := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		var order []string
		seen := map[string]bool{}
		if written != nil && written.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(written.Content); i += 2 {
				k := written.Content[i].Value
				if _, ok := x[k]; ok && !seen[k] {
					order, seen[k] = append(order, k), true
				}
			}
		}
		var rest []string
		for k := range x {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		for _, k := range append(order, rest...) {
			child := manifest.ChildPath(path, k)
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}
			if r.defaults[child] {
				key.LineComment = defaultComment
			}
			n.Content = append(n.Content, key, r.node(child, mappingValue(written, k), x[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i, item := range x {
			var w *yaml.Node
			if written != nil && written.Kind == yaml.SequenceNode && i < len(written.Content) {
				w = written.Content[i]
			}
			n.Content = append(n.Content, r.node(manifest.IndexPath(path, i), w, item))
		}
		return n
	}
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		n = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return n
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
