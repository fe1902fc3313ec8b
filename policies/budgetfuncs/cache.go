package budgetfuncs

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/internal/valuekey"
)

// maxBudgetCacheEntries bounds the cache. A repository's NodePools share a
// handful of budget lists; when more distinct lists than this pass through,
// the cache starts over rather than growing with the input.
const maxBudgetCacheEntries = 1024

// Cache remembers what the budget builtins computed for one list of
// budgets: NodePools that share their budgets (most of a repository's) and
// the several rules that read one NodePool's budgets cost one computation.
// An entry is keyed by the few fields the budget package reads (see
// FieldPaths), printed, so a key names exactly what the result depends
// on. Safe for concurrent use; results are immutable Rego values shared by
// every evaluation.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*Entry
	// windows is shared by the entries: lists of budgets that differ only
	// in their node counts (a new NodePool copied from another) share the
	// schedules' windows, the costly part of analysing a span.
	windows *budget.SpanWindows
	// reasons are the budget reasons of the Karpenter release judged: a
	// budget without reasons covers them all, so they shape every answer.
	reasons []budget.Reason
}

// maxSpanWindows bounds the schedules' windows remembered, a few hundred
// bytes each.
const maxSpanWindows = 1024

// NewCache returns an empty cache for the newest Karpenter release's
// reasons (budget.Reasons).
func NewCache() *Cache { return NewCacheFor(budget.Reasons) }

// NewCacheFor returns an empty cache that judges budgets by the reasons of
// one Karpenter release (budget.ReasonsOf).
func NewCacheFor(reasons []budget.Reason) *Cache {
	return &Cache{entries: map[string]*Entry{}, windows: budget.NewSpanWindows(maxSpanWindows), reasons: reasons}
}

// Entry is one list of budgets, parsed once.
type Entry struct {
	pool map[string]any // FieldPaths as JSON values
	set  *budget.Set    // nil when the budgets are unreadable
	// held is the hold budget a valid record vouches for, which set leaves
	// out; nil when there is none.
	held    *heldBudget
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

// AppendInstantKey appends to buf what karpgate.budgets.analyze's result
// for the entry's NodePool at now depends on besides the budgets, which
// the entry is keyed by: a memo of what rules make of that result keys by
// both.
func (e *Entry) AppendInstantKey(buf []byte, now time.Time) []byte {
	key, _ := e.instant(now)
	return key.appendTo(buf)
}

// instant is budget.Analyze of the entry's NodePool at now, computing the
// span of now's week once, and the key that says what the result depends on.
func (e *Entry) instant(now time.Time) (instantKey, budget.Analysis) {
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
func (e *Entry) analysis(now time.Time) (*ast.Term, error) {
	key, a := e.instant(now)
	e.mu.Lock()
	t, ok := e.analyses[key]
	e.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := valueTerm(analysisToRego(a, e.held))
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

// entry is Lookup, remembered for the rest of one evaluation.
func (c *Cache) entry(bctx rego.BuiltinContext, pool ast.Value) (*Entry, error) {
	obj, isObject := pool.(ast.Object)
	if isObject && bctx.Cache != nil {
		if e, ok := bctx.Cache.Get(evalKey{obj}); ok {
			return e.(*Entry), nil
		}
	}
	e, err := c.Lookup(pool)
	if err == nil && isObject && bctx.Cache != nil {
		bctx.Cache.Put(evalKey{obj}, e)
	}
	return e, err
}

// Lookup returns the entry for a NodePool (as a Rego value), creating it.
func (c *Cache) Lookup(pool ast.Value) (*Entry, error) {
	if _, ok := pool.(ast.Object); !ok {
		return nil, fmt.Errorf("want an object, got %s", ast.ValueName(pool))
	}
	sc := keyScratches.Get().(*keyScratch)
	defer keyScratches.Put(sc)
	sc.key = budgetFields.AppendKey(&sc.enc, sc.key[:0], pool)
	return c.lookupKey(sc.key, func() (ast.Value, error) { return pool, nil })
}

// LookupGo is Lookup of a NodePool's Go values, converting them only when
// the entry is new; ok is false when the key cannot be made from them (see
// valuekey.Projection.AppendGoKey). The key is written with enc into
// key[:0], which comes back grown, for the caller to reuse: a memo lookup
// makes one for every evaluation of a NodePool, and allocates nothing
// once its space has grown.
func (c *Cache) LookupGo(enc *valuekey.Encoder, key []byte, pool map[string]any, convert func() (ast.Value, error)) (e *Entry, grown []byte, ok bool, err error) {
	if key, ok = budgetFields.AppendGoKey(enc, key[:0], pool); !ok {
		return nil, key, false, nil
	}
	e, err = c.lookupKey(key, convert)
	return e, key, true, err
}

// keyScratch is the space Lookup writes its key in, reused through
// keyScratches so that a lookup allocates nothing.
type keyScratch struct {
	enc valuekey.Encoder
	key []byte
}

var keyScratches = sync.Pool{New: func() any { return &keyScratch{key: make([]byte, 0, 256)} }}

// lookupKey is lookup with the key made; pool is called only for a new
// entry, outside the lock.
func (c *Cache) lookupKey(key []byte, pool func() (ast.Value, error)) (*Entry, error) {
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
	if e, err = newEntry(budgetFields.Reduce(v), c.windows, c.reasons); err != nil {
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

func newEntry(fields ast.Value, windows *budget.SpanWindows, reasons []budget.Reason) (*Entry, error) {
	v, err := ast.JSON(fields)
	if err != nil {
		return nil, err
	}
	pool, _ := normaliseNumbers(v).(map[string]any)
	e := &Entry{pool: pool, windows: windows, spans: map[int64]budget.Analysis{}, analyses: map[instantKey]*ast.Term{}}
	if budgets, err := budget.FromNodePool(pool); err == nil {
		e.held = findHeld(pool)
		e.set = budget.CompileSetFor(reasons, e.held.leaveOut(budgets))
	}
	e.problems = sync.OnceValues(func() (*ast.Term, error) {
		return valueTerm(problemsToRego(budget.ProblemsFor(reasons, e.pool)))
	})
	return e, nil
}

// budgetFields keys and reduces a NodePool to FieldPaths.
var budgetFields = valuekey.NewProjection(FieldPaths, nil)
