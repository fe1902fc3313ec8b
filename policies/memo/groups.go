package memo

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/valuekey"
)

// Group is a set of rules memoized together: everything they read lies
// within one footprint, so the engine evaluates them on the input reduced
// to it, once per distinct reduced input, and reuses their violations for
// every object that agrees on it (see footprint.go).
type Group struct {
	// ID ("group1", ...) names the group's selection in the engine's
	// dispatch data, which the group's query reads.
	ID string
	// Mutates: the group's rules return patches, for the mutating webhook;
	// a group never mixes them with the others.
	Mutates bool
	// Applies says, per enforcement point, which kinds it has rules for.
	Applies map[config.EnforcementPoint]map[string]bool

	footprint footprint
	// reduced is the input as the group's rules see it: the footprint,
	// plus what the dispatch query itself reads.
	reduced valuekey.Projection
}

// Candidate is a rule the engine would memoize if its footprint allows.
type Candidate struct {
	// Violation is the compiled rules of its violation set.
	Violation []*ast.Rule
	// Mutates: it returns patches, for the mutating webhook.
	Mutates bool
	// Applies reports whether it runs for objects of kind at point.
	Applies func(point config.EnforcementPoint, kind string) bool
}

// Groups gives every candidate with a memoizable footprint a group: a
// candidate joins the first group whose footprint covers its own and that
// is, like the candidate, a mutation group or not; the widest footprints
// go first, so that few groups form. A mutation rule's patch is part of
// its violation, so what one object's footprint found, patch and all, is
// what every object that agrees on the footprint would find. It returns
// the groups and, per candidate, the ID of its group or "". kinds are the
// kinds Applies is filled in for: the engine's dispatch keys, "*" (the
// rules for every kind, which kinds without a key of their own get)
// among them.
func Groups(c *ast.Compiler, candidates []Candidate, kinds []string) (groups []*Group, ids []string) {
	type memoizable struct {
		candidate int
		fp        footprint
	}
	var found []memoizable
	for i, cand := range candidates {
		fp, ok := footprintOf(c, cand.Violation)
		if ok && fp.memoizable() {
			found = append(found, memoizable{i, fp})
		}
	}
	size := func(f footprint) int {
		n := len(f.all()) + len(f.exists)
		if f.budgets {
			n += 100 // a budgets footprint covers what others cannot
		}
		return n
	}
	slices.SortStableFunc(found, func(a, b memoizable) int { return size(b.fp) - size(a.fp) })
	ids = make([]string, len(candidates))
	for _, m := range found {
		cand := candidates[m.candidate]
		i := slices.IndexFunc(groups, func(g *Group) bool { return g.Mutates == cand.Mutates && g.footprint.covers(m.fp) })
		if i < 0 {
			g := &Group{ID: "group" + strconv.Itoa(len(groups)+1), Mutates: cand.Mutates, footprint: m.fp, Applies: map[config.EnforcementPoint]map[string]bool{}}
			g.reduced = valuekey.NewProjection(dedupe(append(m.fp.all(), []string{"enforcementPoint"}, []string{"object", "kind"})), m.fp.exists)
			groups = append(groups, g)
			i = len(groups) - 1
		}
		ids[m.candidate] = groups[i].ID
		for _, point := range config.EnforcementPoints {
			if groups[i].Applies[point] == nil {
				groups[i].Applies[point] = map[string]bool{}
			}
			for _, kind := range kinds {
				if cand.Applies(point, kind) {
					groups[i].Applies[point][kind] = true
				}
			}
		}
	}
	return groups, ids
}

func (g *Group) String() string {
	return fmt.Sprintf("%s %v budgets=%v mutates=%v", g.ID, g.reduced, g.footprint.budgets, g.Mutates)
}
