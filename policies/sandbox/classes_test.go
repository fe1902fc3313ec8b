package sandbox

import (
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// TestEveryBuiltinIsClassified: every builtin OPA offers is either refused
// with a reason or in exactly one cost class, and the stoppable ones are
// among those a policy may call. An OPA upgrade that adds a builtin fails here
// until someone judges it; until then policies cannot call it.
func TestEveryBuiltinIsClassified(t *testing.T) {
	classes := map[string][]string{}
	for _, name := range smallBuiltins {
		classes[name] = append(classes[name], "small")
	}
	for _, name := range chargedBuiltins {
		classes[name] = append(classes[name], "charged")
	}
	for name := range sizedBuiltins {
		classes[name] = append(classes[name], "sized")
	}
	offered := map[string]bool{}
	for _, b := range ast.CapabilitiesForThisVersion().Builtins {
		offered[b.Name] = true
		reason, forbidden := forbiddenBuiltin(b.Name)
		switch in := classes[b.Name]; {
		case len(in) > 1:
			t.Errorf("%s is in several classes: %v", b.Name, in)
		case len(in) == 1 && forbidden:
			t.Errorf("%s is classified (%s) and forbidden (%s)", b.Name, in[0], reason)
		case len(in) == 0 && !forbidden:
			t.Errorf("%s is neither classified nor forbidden", b.Name)
		}
	}
	for name, in := range classes {
		if !offered[name] {
			t.Errorf("%s (%v) is not a builtin of this OPA", name, in)
		}
	}
	for name := range stoppableBuiltins {
		if !classified(name) {
			t.Errorf("stoppable builtin %s is not classified", name)
		}
	}
	if got := capabilities(nil).Builtins; slices.ContainsFunc(got, func(b *ast.Builtin) bool { return !classified(b.Name) }) {
		t.Errorf("capabilities offer an unclassified builtin")
	}
}
