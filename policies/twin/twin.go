package twin

import (
	"fmt"
	"io/fs"
	"sort"

	"github.com/karpgate/karpgate/policies"
)

// libFile holds the helpers the twins share, beside lib.rego.
const libFile = "rules/lib/lib.cel"

// Twin is a built-in rule and its CEL twin.
type Twin struct {
	Rule policies.Rule
	// Body is the twin with its helpers written out: a CEL expression of
	// o (the object judged) and prod (whether it is production) whose value
	// is the rule's violations, a list of {path, msg, fix, value} maps with
	// Rego's meaning (fix "" for the rule's own fix); value is what the
	// object holds at path, for the webhook's grandfathering of a denial
	// the old object already had.
	Body string
}

// ID is the rule's ID.
func (t Twin) ID() string { return t.Rule.ID }

// Load reads the twin of every rule of catalog that has one, in the
// catalog's order (by ID). Only built-in rules have twins: a user's Rego
// has no CEL beside it.
func Load(catalog policies.Catalog) ([]Twin, error) {
	x, err := newExpander()
	if err != nil {
		return nil, err
	}
	var out []Twin
	for _, r := range catalog {
		if r.TwinFile == "" {
			continue
		}
		src, err := fs.ReadFile(policies.BuiltinFiles(), r.TwinFile)
		if err != nil {
			return nil, err
		}
		body, err := x.expand(string(src))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.TwinFile, err)
		}
		out = append(out, Twin{Rule: r, Body: body})
	}
	return out, nil
}

// LoadBuiltin loads the twins of the built-in catalog.
func LoadBuiltin() ([]Twin, error) {
	catalog, err := policies.BuiltinCatalog()
	if err != nil {
		return nil, err
	}
	return Load(catalog)
}

func newExpander() (*expander, error) {
	src, err := fs.ReadFile(policies.BuiltinFiles(), libFile)
	if err != nil {
		return nil, err
	}
	helpers, err := parseHelpers(libFile, string(src))
	if err != nil {
		return nil, err
	}
	for name, h := range generatedHelpers() {
		if _, dup := helpers[name]; dup {
			return nil, fmt.Errorf("%s defines %s, which generated.go writes", libFile, name)
		}
		helpers[name] = h
	}
	return &expander{helpers: helpers}, nil
}

// IDs lists the twins' rule IDs.
func IDs(twins []Twin) []string {
	out := make([]string, len(twins))
	for i, t := range twins {
		out[i] = t.ID()
	}
	sort.Strings(out)
	return out
}
