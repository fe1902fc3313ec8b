package policies

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/valuekey"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
)

// ruleGroup is a set of rules memoized together: everything they read
// lies within one footprint, so the engine evaluates them on the input
// reduced to it, once per distinct reduced input, and reuses their
// violations for every object that agrees on it (see footprint.go).
type ruleGroup struct {
	id string // "group1", ...: the group's selection in dispatch
	// mutates: the group's rules return patches, for the mutating webhook
	// (Request.MutationsOnly); a group never mixes them with the others.
	mutates   bool
	footprint footprint
	// reduced is the input as the group's rules see it: the footprint,
	// plus what the dispatch query itself reads.
	reduced valuekey.Projection
	// applies says, per enforcement point, which kinds it has rules for.
	applies map[config.EnforcementPoint]map[string]bool
}

// groupRules gives every rule with a memoizable footprint a group: a rule
// joins the first group whose footprint covers its own and that is, like
// the rule, a mutation group or not; the widest footprints go first, so
// that few groups form. Cross-object rules stay out, and so do the schema
// rules, which have their own query, and the rules that judge only some
// operations: a group is evaluated for every operation. A mutation rule's
// patch is part of its violation, so what one object's footprint found,
// patch and all, is what every object that agrees on the footprint would
// find.
func groupRules(c *ast.Compiler, catalog Catalog, cfg *config.Config) []*ruleGroup {
	type candidate struct {
		rule int
		fp   footprint
	}
	var candidates []candidate
	for i := range catalog {
		r := &catalog[i]
		if r.crossObject || r.ReportsSchema() || len(r.Operations) > 0 {
			continue
		}
		ref := ast.MustParseRef(r.Package).Append(ast.StringTerm("violation"))
		fp, ok := footprintOf(c, c.GetRulesExact(ref))
		if ok && fp.memoizable() {
			candidates = append(candidates, candidate{i, fp})
		}
	}
	size := func(f footprint) int {
		n := len(f.all()) + len(f.exists)
		if f.budgets {
			n += 100 // a budgets footprint covers what others cannot
		}
		return n
	}
	slices.SortStableFunc(candidates, func(a, b candidate) int { return size(b.fp) - size(a.fp) })
	var groups []*ruleGroup
	for _, cand := range candidates {
		r := &catalog[cand.rule]
		i := slices.IndexFunc(groups, func(g *ruleGroup) bool { return g.mutates == r.Mutates && g.footprint.covers(cand.fp) })
		if i < 0 {
			g := &ruleGroup{id: "group" + strconv.Itoa(len(groups)+1), mutates: r.Mutates, footprint: cand.fp, applies: map[config.EnforcementPoint]map[string]bool{}}
			g.reduced = valuekey.NewProjection(dedupe(append(cand.fp.all(), []string{"enforcementPoint"}, []string{"object", "kind"})), cand.fp.exists)
			groups = append(groups, g)
			i = len(groups) - 1
		}
		r.group = groups[i].id
		for _, point := range config.EnforcementPoints {
			if groups[i].applies[point] == nil {
				groups[i].applies[point] = map[string]bool{}
			}
			for _, k := range karpenter.Kinds {
				if cfg.Enabled(r.ID) && r.AppliesTo(k.Kind) && r.RunsAt(point) && (!r.Mutates || point == config.Admission) {
					groups[i].applies[point][k.Kind] = true
				}
			}
		}
	}
	return groups
}

// maxViolationCacheEntries bounds the violations remembered: when more
// distinct reduced inputs pass through, the cache starts over.
const maxViolationCacheEntries = 4096

// maxMemoKeyBytes bounds one remembered key, so that the cache's keys never
// hold more than 16 MiB: a reduced input that prints longer (annotations
// may hold up to 256 KiB; kubectl's last-applied-configuration is a copy of
// the whole object) is evaluated every time instead. Budgets, AMI
// selections and the annotations of an object applied with kubectl
// typically print to a few hundred bytes to 2 KiB.
const maxMemoKeyBytes = 4 << 10

// violationCache remembers groups' violations by group and reduced input.
// Safe for concurrent use.
type violationCache struct {
	mu      sync.Mutex
	entries map[string][]rawViolation
}

func newViolationCache() *violationCache {
	return &violationCache{entries: map[string][]rawViolation{}}
}

// get looks key up. A key over maxMemoKeyBytes is never there (put keeps
// none), so it is neither hashed nor looked up under the lock.
func (c *violationCache) get(key []byte) ([]rawViolation, bool) {
	if len(key) > maxMemoKeyBytes {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	vs, ok := c.entries[string(key)]
	return vs, ok
}

// put remembers vs under key, unless the key is over maxMemoKeyBytes.
func (c *violationCache) put(key []byte, vs []rawViolation) {
	if len(key) > maxMemoKeyBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxViolationCacheEntries {
		clear(c.entries)
	}
	c.entries[string(key)] = vs
}

// groupViolations evaluates a group's rules on an input, or reuses what
// they found for an input that agrees with it on the group's footprint
// (and, for budgets, on what karpgate.budgets.analyze makes of the instant).
// The key is made from the request's Go values when it can be, so that a
// remembered group costs no conversion.
func (e *Engine) groupViolations(ctx context.Context, g *ruleGroup, query int, in *evalInput, now time.Time, ref string) ([]rawViolation, error) {
	sc := keyScratches.Get().(*keyScratch)
	defer keyScratches.Put(sc)
	key, fromGo := g.reduced.AppendGoKey(&sc.enc, append(sc.key[:0], g.id...), in.goInput)
	if !fromGo {
		input, _, err := in.rego()
		if err != nil {
			return nil, err
		}
		key = g.reduced.AppendKey(&sc.enc, append(sc.key[:0], g.id...), input)
	}
	if g.footprint.budgets {
		entry, err := e.budgetEntry(sc, in)
		if err != nil {
			return nil, err
		}
		key = entry.AppendInstantKey(append(key, 2), now)
	}
	sc.key = key // keep what the key grew to for the next lookup
	if vs, ok := e.groupRuns.get(key); ok {
		return vs, nil
	}
	input, _, err := in.rego()
	if err != nil {
		return nil, err
	}
	vs, err := e.violations(ctx, e.queries.groups[query], g.reduced.Reduce(input), now, ref)
	if err != nil {
		return nil, err
	}
	e.groupRuns.put(key, vs)
	return vs, nil
}

// budgetEntry is the budget cache's entry for the request's object, looked
// up by its Go values when it can be.
func (e *Engine) budgetEntry(sc *keyScratch, in *evalInput) (*budgetfuncs.Entry, error) {
	convert := func() (ast.Value, error) {
		_, object, err := in.rego()
		return object, err
	}
	entry, key, fromGo, err := e.budgets.LookupGo(&sc.enc, sc.budget, in.req.Object, convert)
	sc.budget = key
	if fromGo || err != nil {
		return entry, err
	}
	object, err := convert()
	if err != nil {
		return nil, err
	}
	return e.budgets.Lookup(object)
}

// keyScratch is the space one memo lookup writes its keys in, reused
// through keyScratches so that a lookup allocates nothing.
type keyScratch struct {
	enc         valuekey.Encoder
	key, budget []byte
}

var keyScratches = sync.Pool{New: func() any { return &keyScratch{key: make([]byte, 0, 512), budget: make([]byte, 0, 256)} }}

func (g *ruleGroup) String() string {
	return fmt.Sprintf("%s %v budgets=%v mutates=%v", g.id, g.reduced, g.footprint.budgets, g.mutates)
}
