package rewrite

import (
	"fmt"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/conversion"
)

// An edit turns an object's YAML node tree from its original content into
// its converted content field by field, so that every node it does not touch
// keeps its comments, key order and quoting.

// edit is one field change. A move reuses the node deleted at from.
type edit struct {
	path     []any
	old, new any
	hasOld   bool
	hasNew   bool
	from     []any // set on an added field that moves the node found here
	movedOut bool  // a deletion whose node an add took
}

// diffEdits lists the edits from before to after: map keys one by one, lists
// of the same length item by item (so comments inside items survive), other
// lists whole. A removed field and an added field with equal values become a
// move, which carries the node and its comments across.
func diffEdits(before, after map[string]any) []*edit {
	var edits []*edit
	var walk func(path []any, b any, hasB bool, a any, hasA bool)
	walk = func(path []any, b any, hasB bool, a any, hasA bool) {
		if hasB && hasA {
			bm, okB := b.(map[string]any)
			am, okA := a.(map[string]any)
			if okB && okA {
				for _, k := range unionKeys(bm, am) {
					bv, inB := bm[k]
					av, inA := am[k]
					walk(append(path[:len(path):len(path)], k), bv, inB, av, inA)
				}
				return
			}
			bl, okB := b.([]any)
			al, okA := a.([]any)
			if okB && okA && len(bl) == len(al) {
				for i := range bl {
					walk(append(path[:len(path):len(path)], i), bl[i], true, al[i], true)
				}
				return
			}
			if conversion.Equal(b, a) {
				return
			}
		}
		edits = append(edits, &edit{path: path, old: b, hasOld: hasB, new: a, hasNew: hasA})
	}
	walk(nil, before, true, after, true)
	for _, add := range edits {
		if add.hasOld || !add.hasNew {
			continue
		}
		for _, del := range edits {
			if del.hasOld && !del.hasNew && !del.movedOut && conversion.Equal(del.old, add.new) {
				add.from, del.movedOut = del.path, true
				break
			}
		}
	}
	return edits
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// nodePair is a mapping entry: its key node and value node.
type nodePair struct{ key, value *yaml.Node }

// applyEdits changes the object node in place. borrowed supplies nodes for
// added fields taken from another object (a kubelet block moved from a
// NodePool into its EC2NodeClass), keyed by field path.
func applyEdits(obj *yaml.Node, edits []*edit, borrowed map[string]nodePair) error {
	moved := map[*edit]nodePair{}
	for _, e := range edits {
		if e.from == nil {
			continue
		}
		parent, err := walkTo(obj, e.from[:len(e.from)-1])
		if err != nil {
			return err
		}
		pair, ok := entry(parent, e.from[len(e.from)-1])
		if !ok {
			return fmt.Errorf("%s: not found in the YAML", conversion.FieldPath(e.from))
		}
		moved[e] = pair
	}
	for _, e := range edits {
		if !e.hasNew {
			continue
		}
		parent, err := walkTo(obj, e.path[:len(e.path)-1])
		if err != nil {
			return err
		}
		step := e.path[len(e.path)-1]
		replacement, hasReplacement := moved[e]
		if b, ok := borrowed[conversion.FieldPath(e.path)]; ok {
			replacement, hasReplacement = b, true
		}
		if err := setField(parent, step, e.new, replacement, hasReplacement); err != nil {
			return fmt.Errorf("%s: %w", conversion.FieldPath(e.path), err)
		}
	}
	for _, e := range edits {
		if e.hasOld && !e.hasNew {
			parent, err := walkTo(obj, e.path[:len(e.path)-1])
			if err != nil {
				return err
			}
			deleteKey(parent, e.path[len(e.path)-1])
		}
	}
	return nil
}

func walkTo(node *yaml.Node, path []any) (*yaml.Node, error) {
	for i, step := range path {
		pair, ok := entry(node, step)
		if !ok {
			return nil, fmt.Errorf("%s: not found in the YAML", conversion.FieldPath(path[:i+1]))
		}
		node = pair.value
	}
	if node.Kind == yaml.AliasNode {
		return nil, fmt.Errorf("%s: a YAML alias; convert this object by hand", conversion.FieldPath(path))
	}
	return node, nil
}

// entry finds a map key or list item. Aliases and merge keys are not
// followed: editing through them would change other objects too.
func entry(node *yaml.Node, step any) (nodePair, bool) {
	switch s := step.(type) {
	case string:
		if node.Kind != yaml.MappingNode {
			return nodePair{}, false
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == s && node.Content[i].Tag != "!!merge" {
				return nodePair{node.Content[i], node.Content[i+1]}, true
			}
		}
	case int:
		if node.Kind == yaml.SequenceNode && s >= 0 && s < len(node.Content) {
			return nodePair{value: node.Content[s]}, true
		}
	}
	return nodePair{}, false
}

// setField sets parent[step] to value: into the existing node where there
// is one, keeping its comments and quoting, or as a new entry at the end.
func setField(parent *yaml.Node, step any, value any, from nodePair, hasFrom bool) error {
	if existing, ok := entry(parent, step); ok {
		replaceValue(existing.value, value, from, hasFrom)
		return nil
	}
	key, ok := step.(string)
	if !ok || parent.Kind != yaml.MappingNode {
		return fmt.Errorf("cannot add here")
	}
	keyNode := encodeNode(key)
	valueNode := encodeNode(value)
	if hasFrom {
		keyNode, valueNode = from.key, from.value
		if keyNode == nil {
			keyNode = encodeNode(key)
		}
		keyNode.Value = key
		if parent.Style == yaml.FlowStyle {
			clearFlow(valueNode)
		}
	}
	parent.Content = append(parent.Content, keyNode, valueNode)
	return nil
}

// replaceValue rewrites node in place: a scalar keeps its quoting when it
// is still a string, any node keeps its comments and flow style.
func replaceValue(node *yaml.Node, value any, from nodePair, hasFrom bool) {
	head, line, foot := node.HeadComment, node.LineComment, node.FootComment
	var fresh *yaml.Node
	if hasFrom {
		fresh = from.value
	} else {
		fresh = encodeNode(value)
		quoted := node.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
		if node.Kind == yaml.ScalarNode && fresh.Kind == yaml.ScalarNode && fresh.Tag == "!!str" && quoted {
			fresh.Style = node.Style
		}
		if node.Style&yaml.FlowStyle != 0 && fresh.Kind != yaml.ScalarNode {
			fresh.Style = yaml.FlowStyle
		}
	}
	*node = *fresh
	if node.HeadComment == "" {
		node.HeadComment = head
	}
	if node.LineComment == "" {
		node.LineComment = line
	}
	if node.FootComment == "" {
		node.FootComment = foot
	}
}

func deleteKey(parent *yaml.Node, step any) {
	key, ok := step.(string)
	if !ok || parent.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i].Value == key {
			parent.Content = append(parent.Content[:i], parent.Content[i+2:]...)
			return
		}
	}
}

// encodeNode builds the YAML node yaml.v3 would write for a value.
func encodeNode(v any) *yaml.Node {
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		// JSON-compatible values always encode; keep the text if not.
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprint(v)}
	}
	return n
}

// clearFlow makes a block node fit inside a flow collection.
func clearFlow(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style |= yaml.FlowStyle
	}
}

// cloneNode deep-copies a node tree.
func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = cloneNode(child)
	}
	return &c
}
