package explain

import (
	"fmt"
	"strings"
)

// Kinds a target can name.
const (
	KindNodeClaim = "nodeclaim"
	KindNode      = "node"
)

// Target is what to explain: a NodeClaim or a Node, by name.
type Target struct {
	Kind string
	Name string
}

func (t Target) String() string { return t.Kind + "/" + t.Name }

// ParseTarget reads "nodeclaim/NAME" or "node/NAME", accepting the plural
// and kubectl's spellings (nodeclaims/, nodes/, no/, nodeclaim.karpenter.sh/).
func ParseTarget(s string) (Target, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return Target{}, fmt.Errorf("%q: name a NodeClaim or a Node as nodeclaim/NAME or node/NAME", s)
	}
	switch strings.ToLower(kind) {
	case "nodeclaim", "nodeclaims", "nodeclaim.karpenter.sh", "nodeclaims.karpenter.sh":
		return Target{Kind: KindNodeClaim, Name: name}, nil
	case "node", "nodes", "no":
		return Target{Kind: KindNode, Name: name}, nil
	}
	return Target{}, fmt.Errorf("%q: %q is neither nodeclaim nor node; write nodeclaim/NAME or node/NAME", s, kind)
}
