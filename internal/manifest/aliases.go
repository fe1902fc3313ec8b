package manifest

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// MaxAliasNodes is how many nodes YAML aliases may add to one document
// once expanded. Kubernetes objects rarely use aliases at all, and Helm
// values that do add a few hundred nodes; an alias bomb (a large anchor
// referenced many times, or anchors of anchors) adds billions, and every
// reader that expands it (lint, the config loader, yaml.unmarshal in a
// policy) would spin and allocate until it is killed.
const MaxAliasNodes = 1_000_000

// AliasError is a document whose aliases expand past the limit, or an
// alias inside the node it refers to. Its message leaves the position to
// the caller, which names the file too.
type AliasError struct {
	// Position is the alias at which the expansion went past the limit.
	Position
	Anchor string
	Limit  int64
	// Recursive: the alias is inside its own anchor, so it has no end.
	Recursive bool
}

func (e *AliasError) Error() string {
	if e.Recursive {
		return fmt.Sprintf("the YAML alias *%s refers to a node that contains it, so it never ends", e.Anchor)
	}
	return fmt.Sprintf("the YAML alias *%s takes the document past %d nodes once aliases are expanded (an alias bomb?); karpgate refuses to expand it: write the values out, or use fewer aliases",
		e.Anchor, e.Limit)
}

// CheckAliases counts the nodes that aliases add to the tree under n when
// expanded, and fails at the first alias that takes the count past limit
// (0: MaxAliasNodes). It visits each node once: the expanded size of an
// anchored node is computed once and reused for every alias of it, so the
// check costs as much as reading the document, whatever the aliases would
// expand to.
func CheckAliases(n *yaml.Node, limit int64) error {
	_, err := ExpandedNodes(n, limit)
	return err
}

// ExpandedNodes is the number of nodes the tree under n stands for with
// its aliases expanded; it fails as CheckAliases does.
func ExpandedNodes(n *yaml.Node, limit int64) (int64, error) {
	if limit <= 0 {
		limit = MaxAliasNodes
	}
	c := aliasCounter{limit: limit, sizes: map[*yaml.Node]int64{}}
	return c.size(n)
}

type aliasCounter struct {
	limit int64
	added int64
	// sizes are the expanded sizes of the nodes aliases point at; -1 while
	// one is being measured, so an alias inside its own anchor is caught.
	sizes map[*yaml.Node]int64
}

// size is the number of nodes n stands for with its aliases expanded,
// saturating just above the limit.
func (c *aliasCounter) size(n *yaml.Node) (int64, error) {
	if n == nil {
		return 0, nil
	}
	if n.Kind == yaml.AliasNode {
		target := n.Alias
		s, known := c.sizes[target]
		switch {
		case known && s < 0:
			return 0, &AliasError{Position: Position{Line: n.Line, Column: n.Column}, Anchor: n.Value, Limit: c.limit, Recursive: true}
		case !known:
			c.sizes[target] = -1
			var err error
			if s, err = c.size(target); err != nil {
				return 0, err
			}
			c.sizes[target] = s
		}
		c.added = min(c.added+s, c.limit+1)
		if c.added > c.limit {
			return 0, &AliasError{Position: Position{Line: n.Line, Column: n.Column}, Anchor: n.Value, Limit: c.limit}
		}
		return s, nil
	}
	total := int64(1)
	for _, child := range n.Content {
		s, err := c.size(child)
		if err != nil {
			return 0, err
		}
		total = min(total+s, c.limit+1)
	}
	if n.Anchor != "" {
		c.sizes[n] = total
	}
	return total, nil
}
