package manifest

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Position is a 1-based line and column in a source.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// PathSegment is one step of a field path: a map key or a list index.
type PathSegment struct {
	Key     string
	Index   int // valid when IsIndex
	IsIndex bool
}

// ParseFieldPath splits a Kubernetes field path such as
// `spec.disruption.budgets[1].schedule` or `metadata.annotations[a.b/c]`
// into segments. A bracketed number is a list index; anything else in
// brackets is a map key that may contain dots.
func ParseFieldPath(path string) []PathSegment {
	var segs []PathSegment
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				segs = append(segs, PathSegment{Key: path[i+1:]})
				return segs
			}
			inner := path[i+1 : i+end]
			if n, err := strconv.Atoi(inner); err == nil {
				segs = append(segs, PathSegment{Index: n, IsIndex: true})
			} else {
				segs = append(segs, PathSegment{Key: inner})
			}
			i += end + 1
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				end = len(path) - i
			}
			segs = append(segs, PathSegment{Key: path[i : i+end]})
			i += end
		}
	}
	return segs
}

// Position returns where the field at path is written: the key of a map
// entry, or the item of a list. When the path does not exist in full, it
// returns the position of the deepest part that does, which is where a user
// would add the missing field.
func (o *Object) Position(path string) Position {
	return Locate(o.Node, ParseFieldPath(path))
}

// Locate walks node along segs; see Object.Position.
func Locate(node *yaml.Node, segs []PathSegment) Position {
	node = resolveAlias(node)
	if node == nil {
		return Position{}
	}
	pos := Position{Line: node.Line, Column: node.Column}
	for _, seg := range segs {
		switch {
		case seg.IsIndex && node.Kind == yaml.SequenceNode && seg.Index >= 0 && seg.Index < len(node.Content):
			node = resolveAlias(node.Content[seg.Index])
			pos = Position{Line: node.Line, Column: node.Column}
		case !seg.IsIndex && node.Kind == yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(node.Content); i += 2 {
				if keyIs(node.Content[i], seg.Key) {
					pos = Position{Line: node.Content[i].Line, Column: node.Content[i].Column}
					node = resolveAlias(node.Content[i+1])
					found = true
					break
				}
			}
			if !found {
				return pos
			}
		default:
			return pos
		}
	}
	return pos
}

// ChildPath appends a map key to a field path, bracketing keys that would be
// ambiguous after a dot (label and annotation keys, tag names):
// `spec.disruption`, `metadata.annotations[karpenter.sh/nodepool-hash]`.
func ChildPath(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]/ ") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// IndexPath appends a list index to a field path: `spec.budgets[1]`.
func IndexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// FormatFieldPath writes segments back as a field path; it is the inverse
// of ParseFieldPath.
func FormatFieldPath(segs []PathSegment) string {
	path := ""
	for _, seg := range segs {
		if seg.IsIndex {
			path = IndexPath(path, seg.Index)
		} else {
			path = ChildPath(path, seg.Key)
		}
	}
	return path
}
