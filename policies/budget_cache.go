package policies

import (
	"fmt"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/karpgate/karpgate/budget"
)

// maxBudgetCacheEntries bounds the cache. A repository's NodePools share a
// handful of budget lists; when more distinct lists than this pass through,
// the cache starts over rather than growing with the input.
const maxBudgetCacheEntries = 1024

// budgetCache remembers what the budget builtins computed for one list of
// budgets: NodePools that share their budgets (most of a repository's) and
// the several rules that read one NodePool's budgets cost one computation.
// An entry is keyed by the few fields the budget package reads (see
// budgetFields), printed, so a key names exactly what the result depends
// on. Safe for concurrent use; results are immutable Rego values shared by
// every evaluation.
type budgetCache struct {
	mu      sync.Mutex
	entries map[string]*budgetEntry
}

func newBudgetCache() *budgetCache {
	return &budgetCache{entries: map[string]*budgetEntry{}}
}

// budgetEntry is one list of budgets, parsed once.
type budgetEntry struct {
	pool map[string]any // budgetFields as JSON values
	set  *budget.Set    // nil when the budgets are unreadable

	problems func() (*ast.Term, error)

	mu    sync.Mutex
	spans map[time.Time]budget.Analysis // by the Monday a span starts on
}

// evalKey keys an entry in one evaluation's builtin cache by the NodePool
// value itself: the rules of one evaluation call the builtins with the same
// input.object several times, and the value does not change while it runs.
type evalKey struct{ pool ast.Object }

// entry is lookup, remembered for the rest of one evaluation.
func (c *budgetCache) entry(bctx rego.BuiltinContext, pool ast.Value) (*budgetEntry, error) {
	obj, isObject := pool.(ast.Object)
	if isObject && bctx.Cache != nil {
		if e, ok := bctx.Cache.Get(evalKey{obj}); ok {
			return e.(*budgetEntry), nil
		}
	}
	e, err := c.lookup(pool)
	if err == nil && isObject && bctx.Cache != nil {
		bctx.Cache.Put(evalKey{obj}, e)
	}
	return e, err
}

// lookup returns the entry for a NodePool (as a Rego value), creating it.
func (c *budgetCache) lookup(pool ast.Value) (*budgetEntry, error) {
	fields, err := budgetFields(pool)
	if err != nil {
		return nil, err
	}
	key := fields.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return e, nil
	}
	e, err := newBudgetEntry(fields)
	if err != nil {
		return nil, err
	}
	if len(c.entries) >= maxBudgetCacheEntries {
		clear(c.entries)
	}
	c.entries[key] = e
	return e, nil
}

func newBudgetEntry(fields ast.Value) (*budgetEntry, error) {
	v, err := ast.JSON(fields)
	if err != nil {
		return nil, err
	}
	pool, _ := normaliseNumbers(v).(map[string]any)
	e := &budgetEntry{pool: pool, spans: map[time.Time]budget.Analysis{}}
	if budgets, err := budget.FromNodePool(pool); err == nil {
		e.set = budget.CompileSet(budgets)
	}
	e.problems = sync.OnceValues(func() (*ast.Term, error) {
		return valueTerm(problemsToRego(budget.Problems(e.pool)))
	})
	return e, nil
}

// maxSpansPerEntry bounds the weeks one entry remembers: a long-running
// webhook moves into a new week every Monday.
const maxSpansPerEntry = 4

// analysis is budget.Analyze of the entry's NodePool at now, with the span
// of now's week computed once.
func (e *budgetEntry) analysis(now time.Time) (*ast.Term, error) {
	if e.set == nil {
		return valueTerm(analysisToRego(budget.Analysis{}))
	}
	start := budget.MondayOnOrBefore(now)
	e.mu.Lock()
	span, ok := e.spans[start]
	if !ok {
		span = e.set.AnalyzeSpan(start)
		if len(e.spans) >= maxSpansPerEntry {
			clear(e.spans)
		}
		e.spans[start] = span
	}
	e.mu.Unlock()
	return valueTerm(analysisToRego(e.set.AnalyzeAt(span, now)))
}

// budgetFields is the part of a NodePool the budget package reads:
// apiVersion (v1beta1 budgets have no reasons) and spec.disruption.budgets,
// keeping whatever stands in the way when spec or disruption is not an
// object, because the package reports that.
func budgetFields(v ast.Value) (ast.Value, error) {
	obj, ok := v.(ast.Object)
	if !ok {
		return nil, fmt.Errorf("want an object, got %s", ast.ValueName(v))
	}
	out := keepPath(obj, "spec", "disruption", "budgets").(ast.Object)
	if apiVersion := obj.Get(ast.InternedTerm("apiVersion")); apiVersion != nil {
		out.Insert(ast.InternedTerm("apiVersion"), apiVersion)
	}
	return out, nil
}

// keepPath returns v reduced to the one path; a value on the way that is
// not an object is kept whole.
func keepPath(v ast.Value, path ...string) ast.Value {
	if len(path) == 0 {
		return v
	}
	obj, ok := v.(ast.Object)
	if !ok {
		return v
	}
	key := ast.InternedTerm(path[0])
	child := obj.Get(key)
	if child == nil {
		return ast.NewObject()
	}
	return ast.NewObject(ast.Item(key, ast.NewTerm(keepPath(child.Value, path[1:]...))))
}
