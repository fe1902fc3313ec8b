package policies

import (
	"context"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// maxViolationCacheEntries bounds the budget rules' violations remembered:
// when more distinct budgets pass through, the cache starts over.
const maxViolationCacheEntries = 4096

// violationCache remembers the budget rules' violations by what they depend
// on (see budgetViolations). Safe for concurrent use.
type violationCache struct {
	mu      sync.Mutex
	entries map[string][]rawViolation
}

func newViolationCache() *violationCache {
	return &violationCache{entries: map[string][]rawViolation{}}
}

func (c *violationCache) get(key string) ([]rawViolation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	vs, ok := c.entries[key]
	return vs, ok
}

func (c *violationCache) put(key string, vs []rawViolation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxViolationCacheEntries {
		clear(c.entries)
	}
	c.entries[key] = vs
}

// budgetRulesByPoint says, per enforcement point and kind, whether an
// enabled budget rule applies.
func budgetRulesByPoint(catalog Catalog, cfg *config.Config) map[config.EnforcementPoint]map[string]bool {
	out := map[config.EnforcementPoint]map[string]bool{}
	for _, point := range config.EnforcementPoints {
		out[point] = map[string]bool{}
		for _, k := range karpenter.Kinds {
			for _, r := range catalog {
				if r.budgetOnly && cfg.Enabled(r.ID) && r.AppliesTo(k.Kind) && r.RunsAt(point) {
					out[point][k.Kind] = true
				}
			}
		}
	}
	return out
}

// budgetViolations evaluates the budget rules on an object. Their
// violations depend only on the object's budgetFields, the enforcement
// point (which selects the rules) and the instant as budget.Analyze sees
// it, so they are evaluated once per distinct key, on an input holding
// nothing else, and remembered.
func (e *Engine) budgetViolations(ctx context.Context, object ast.Value, point config.EnforcementPoint, now time.Time, ref string) ([]rawViolation, error) {
	fields, err := budgetFields(object)
	if err != nil {
		return nil, err
	}
	fieldsKey := fields.String()
	entry, err := e.budgets.lookupKey(fieldsKey, fields)
	if err != nil {
		return nil, err
	}
	instant, _ := entry.instant(now)
	key := string(point) + "\x00" + instant.String() + "\x00" + fieldsKey
	if vs, ok := e.budgetRuns.get(key); ok {
		return vs, nil
	}
	input := ast.NewObject(
		ast.Item(ast.StringTerm("object"), ast.NewTerm(fields)),
		ast.Item(ast.StringTerm("enforcementPoint"), ast.StringTerm(string(point))),
	)
	vs, err := e.violations(ctx, e.queries.budgets, input, now, ref)
	if err != nil {
		return nil, err
	}
	e.budgetRuns.put(key, vs)
	return vs, nil
}
