package policies

import (
	"fmt"
	"strconv"
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
	// windows is shared by the entries: lists of budgets that differ only
	// in their node counts (a new NodePool copied from another) share the
	// schedules' windows, the costly part of analysing a span.
	windows *budget.SpanWindows
}

// maxSpanWindows bounds the schedules' windows remembered, a few hundred
// bytes each.
const maxSpanWindows = 1024

func newBudgetCache() *budgetCache {
	return &budgetCache{entries: map[string]*budgetEntry{}, windows: budget.NewSpanWindows(maxSpanWindows)}
}

// budgetEntry is one list of budgets, parsed once.
type budgetEntry struct {
	pool    map[string]any // budgetFields as JSON values
	set     *budget.Set    // nil when the budgets are unreadable
	windows *budget.SpanWindows

	problems func() (*ast.Term, error)

	mu       sync.Mutex
	spans    map[int64]budget.Analysis // by the Monday a span starts on (Unix seconds)
	analyses map[instantKey]*ast.Term
}

// instantKey is everything budget.Analyze's result depends on besides the
// budgets: the Monday its span starts on and, per budget, whether it never
// fires and whether it is never active, as of the instant.
type instantKey struct {
	start int64
	flags string
}

// appendTo appends the key's text to buf: a memo key is made for every
// evaluation of a NodePool, and fmt would allocate twice for it.
func (k instantKey) appendTo(buf []byte) []byte {
	return append(append(strconv.AppendInt(buf, k.start, 10), '/'), k.flags...)
}

// maxSpansPerEntry bounds the weeks one entry remembers, and
// maxAnalysesPerEntry the analyses: a long-running webhook moves into a
// new week every Monday.
const (
	maxSpansPerEntry    = 4
	maxAnalysesPerEntry = 16
)

// instant is budget.Analyze of the entry's NodePool at now, computing the
// span of now's week once, and the key that says what the result depends on.
func (e *budgetEntry) instant(now time.Time) (instantKey, budget.Analysis) {
	if e.set == nil {
		return instantKey{}, budget.Analysis{}
	}
	start := budget.MondayOnOrBefore(now)
	e.mu.Lock()
	span, ok := e.spans[start.Unix()]
	if !ok {
		span = e.set.AnalyzeSpanWith(start, e.windows)
		if len(e.spans) >= maxSpansPerEntry {
			clear(e.spans)
		}
		e.spans[start.Unix()] = span
	}
	e.mu.Unlock()
	a := e.set.AnalyzeAt(span, now)
	flags := make([]byte, 0, 2*len(a.Budgets))
	for _, b := range a.Budgets {
		flags = append(flags, bit(b.NeverFires), bit(b.NeverActive))
	}
	return instantKey{start: start.Unix(), flags: string(flags)}, a
}

func bit(b bool) byte {
	if b {
		return '1'
	}
	return '0'
}

// analysis is the analysis as the rules read it.
func (e *budgetEntry) analysis(now time.Time) (*ast.Term, error) {
	key, a := e.instant(now)
	e.mu.Lock()
	t, ok := e.analyses[key]
	e.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := valueTerm(analysisToRego(a))
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if len(e.analyses) >= maxAnalysesPerEntry {
		clear(e.analyses)
	}
	e.analyses[key] = t
	e.mu.Unlock()
	return t, nil
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
	if _, ok := pool.(ast.Object); !ok {
		return nil, fmt.Errorf("want an object, got %s", ast.ValueName(pool))
	}
	sc := keyScratches.Get().(*keyScratch)
	defer keyScratches.Put(sc)
	sc.budget = budgetFields.appendKey(&sc.enc, sc.budget[:0], pool)
	return c.lookupKey(sc.budget, func() (ast.Value, error) { return pool, nil })
}

// lookupGo is lookup of a NodePool's Go values, converting them only when
// the entry is new; ok is false when the key cannot be made from them (see
// projection.appendGoKey).
func (c *budgetCache) lookupGo(sc *keyScratch, pool map[string]any, convert func() (ast.Value, error)) (e *budgetEntry, ok bool, err error) {
	if sc.budget, ok = budgetFields.appendGoKey(&sc.enc, sc.budget[:0], pool); !ok {
		return nil, false, nil
	}
	e, err = c.lookupKey(sc.budget, convert)
	return e, true, err
}

// lookupKey is lookup with the key made; pool is called only for a new
// entry, outside the lock.
func (c *budgetCache) lookupKey(key []byte, pool func() (ast.Value, error)) (*budgetEntry, error) {
	c.mu.Lock()
	e, ok := c.entries[string(key)]
	c.mu.Unlock()
	if ok {
		return e, nil
	}
	v, err := pool()
	if err != nil {
		return nil, err
	}
	if e, err = newBudgetEntry(budgetFields.reduce(v), c.windows); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if existing, ok := c.entries[string(key)]; ok {
		return existing, nil // another evaluation made it meanwhile
	}
	if len(c.entries) >= maxBudgetCacheEntries {
		clear(c.entries)
	}
	c.entries[string(key)] = e
	return e, nil
}

func newBudgetEntry(fields ast.Value, windows *budget.SpanWindows) (*budgetEntry, error) {
	v, err := ast.JSON(fields)
	if err != nil {
		return nil, err
	}
	pool, _ := normaliseNumbers(v).(map[string]any)
	e := &budgetEntry{pool: pool, windows: windows, spans: map[int64]budget.Analysis{}, analyses: map[instantKey]*ast.Term{}}
	if budgets, err := budget.FromNodePool(pool); err == nil {
		e.set = budget.CompileSet(budgets)
	}
	e.problems = sync.OnceValues(func() (*ast.Term, error) {
		return valueTerm(problemsToRego(budget.Problems(e.pool)))
	})
	return e, nil
}

// budgetFields is the part of a NodePool the budget package reads, and
// all a budget rule may read of it (see footprint.go): apiVersion (v1beta1
// budgets have no reasons), kind and spec.disruption.budgets, keeping
// whatever stands in the way when spec or disruption is not an object,
// because the package reports that.
var (
	budgetFieldPaths = [][]string{{"apiVersion"}, {"kind"}, {"spec", "disruption", "budgets"}}
	budgetFields     = newProjection(budgetFieldPaths, nil)
)
