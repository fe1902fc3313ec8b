package memo

import (
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/internal/valuekey"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
)

// maxEntries bounds the violations remembered: when more distinct reduced
// inputs pass through, the memo starts over.
const maxEntries = 4096

// MaxKeyBytes bounds one remembered key, so that the memo's keys never
// hold more than 16 MiB: a reduced input that prints longer (annotations
// may hold up to 256 KiB; kubectl's last-applied-configuration is a copy of
// the whole object) is evaluated every time instead. Budgets, AMI
// selections and the annotations of an object applied with kubectl
// typically print to a few hundred bytes to 2 KiB.
const MaxKeyBytes = 4 << 10

// Memo remembers the groups' violations, V being what the engine makes of
// one evaluation of a group's query, by group and reduced input. Safe for
// concurrent use.
type Memo[V any] struct {
	// budgets is the budget builtins' cache, which a group whose rules
	// call them is keyed by as well.
	budgets *budgetfuncs.Cache

	mu      sync.Mutex
	entries map[string]V
}

// New is an empty memo whose groups' rules call the budget builtins with
// budgets, the cache of the engine's queries.
func New[V any](budgets *budgetfuncs.Cache) *Memo[V] {
	return &Memo[V]{budgets: budgets, entries: map[string]V{}}
}

// Input is what the memo reads of one request.
type Input struct {
	// Go has the fields of the Rego input the memoized rules may read (see
	// footprint.memoizable), as the Go values the request decoded to, under
	// the same names; Object is Go["object"].
	Go, Object map[string]any
	// Rego converts the input to Rego's representation, once, and gives the
	// object in it too. The memo calls it only when it cannot make a key
	// from the Go values, or to evaluate; a request whose groups are all
	// remembered is never converted.
	Rego func() (input ast.Object, object ast.Value, err error)
}

// Violations are what the group's rules find in the input: those found
// for an input that agrees with it on the group's footprint (and, for
// budgets, on what karpgate.budgets.analyze makes of now), or else what
// evaluate finds on the input reduced to the footprint, which is then
// remembered.
func (m *Memo[V]) Violations(g *Group, in Input, now time.Time, evaluate func(reduced ast.Object) (V, error)) (V, error) {
	var none V
	sc := keyScratches.Get().(*keyScratch)
	defer keyScratches.Put(sc)
	key, fromGo := g.reduced.AppendGoKey(&sc.enc, append(sc.key[:0], g.ID...), in.Go)
	if !fromGo {
		input, _, err := in.Rego()
		if err != nil {
			return none, err
		}
		key = g.reduced.AppendKey(&sc.enc, append(sc.key[:0], g.ID...), input)
	}
	if g.footprint.budgets {
		entry, err := m.budgetEntry(sc, in)
		if err != nil {
			return none, err
		}
		key = entry.AppendInstantKey(append(key, 2), now)
	}
	sc.key = key // keep what the key grew to for the next lookup
	if vs, ok := m.get(key); ok {
		return vs, nil
	}
	input, _, err := in.Rego()
	if err != nil {
		return none, err
	}
	vs, err := evaluate(g.reduced.Reduce(input))
	if err != nil {
		return none, err
	}
	m.put(key, vs)
	return vs, nil
}

// budgetEntry is the budget cache's entry for the request's object, looked
// up by its Go values when it can be.
func (m *Memo[V]) budgetEntry(sc *keyScratch, in Input) (*budgetfuncs.Entry, error) {
	convert := func() (ast.Value, error) {
		_, object, err := in.Rego()
		return object, err
	}
	entry, key, fromGo, err := m.budgets.LookupGo(&sc.enc, sc.budget, in.Object, convert)
	sc.budget = key
	if fromGo || err != nil {
		return entry, err
	}
	object, err := convert()
	if err != nil {
		return nil, err
	}
	return m.budgets.Lookup(object)
}

// get looks key up. A key over MaxKeyBytes is never there (put keeps
// none), so it is neither hashed nor looked up under the lock.
func (m *Memo[V]) get(key []byte) (V, bool) {
	if len(key) > MaxKeyBytes {
		var none V
		return none, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	vs, ok := m.entries[string(key)]
	return vs, ok
}

// put remembers vs under key, unless the key is over MaxKeyBytes.
func (m *Memo[V]) put(key []byte, vs V) {
	if len(key) > MaxKeyBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= maxEntries {
		clear(m.entries)
	}
	m.entries[string(key)] = vs
}

// Keys are the keys remembered, in no order: what tells apart the inputs
// the memo has seen, for tests and diagnostics.
func (m *Memo[V]) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.entries))
	for k := range m.entries {
		keys = append(keys, k)
	}
	return keys
}

// keyScratch is the space one memo lookup writes its keys in, reused
// through keyScratches so that a lookup allocates nothing.
type keyScratch struct {
	enc         valuekey.Encoder
	key, budget []byte
}

var keyScratches = sync.Pool{New: func() any { return &keyScratch{key: make([]byte, 0, 512), budget: make([]byte, 0, 256)} }}
