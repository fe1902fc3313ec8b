package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Limits bound what one evaluation may cost, whatever the policies say.
// Whoever writes the policy folders (in a cluster, the karpgate-policies
// ConfigMap) decides what runs in karpgate's process; these bounds keep a
// careless or hostile policy from taking it down, and the engine's
// load-time check refuses one that is too expensive before it serves a
// request.
type Limits struct {
	// MaxSteps bounds the expressions one evaluation runs, counting each
	// number numbers.range generates: it bounds time and memory alike.
	// The built-in rules take a few hundred on a typical object.
	MaxSteps int64
	// MaxBuiltinBytes bounds what one call of a builtin that can make more
	// than it is given (numbers.range, bits.lsh, sprintf, concat, replace,
	// json.marshal, ...) may produce. The call is refused before it runs.
	MaxBuiltinBytes int64
	// MaxEvaluationBytes bounds what the builtins of one evaluation make in
	// all: a loop calling sprintf or upper a hundred thousand times stops
	// here, whatever each call makes.
	MaxEvaluationBytes int64
	// MaxEvaluationTime bounds one evaluation's time where its context
	// does not bound it sooner (lint, the load-time cost check); a call of
	// a regular expression or a glob stops then too (see stoppable.go).
	MaxEvaluationTime time.Duration
}

// DefaultLimits are generous for the built-in rules: a thousand times the
// steps they take on a large object, and outputs far above any object
// etcd stores.
var DefaultLimits = Limits{MaxSteps: 250_000, MaxBuiltinBytes: 1 << 20, MaxEvaluationBytes: 16 << 20, MaxEvaluationTime: 10 * time.Second}

// WithDefaults is l with DefaultLimits for its zero fields.
func (l Limits) WithDefaults() Limits {
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultLimits.MaxSteps
	}
	if l.MaxBuiltinBytes <= 0 {
		l.MaxBuiltinBytes = DefaultLimits.MaxBuiltinBytes
	}
	if l.MaxEvaluationBytes <= 0 {
		l.MaxEvaluationBytes = DefaultLimits.MaxEvaluationBytes
	}
	if l.MaxEvaluationTime <= 0 {
		l.MaxEvaluationTime = DefaultLimits.MaxEvaluationTime
	}
	return l
}

// ErrTooExpensive is returned when an evaluation runs past MaxSteps or a
// builtin call would produce more than MaxBuiltinBytes.
var ErrTooExpensive = errors.New("the policies are too expensive for this object")

// evalBudget is one evaluation's topdown.Cancel. OPA asks Cancelled before
// every expression and for every number numbers.range makes, so counting
// the questions counts the steps. Builtins find it in their context and
// charge it.
type evalBudget struct {
	limits    Limits
	steps     atomic.Int64
	made      atomic.Int64 // bytes the builtins made
	cancelled atomic.Bool
	mu        sync.Mutex
	exceeded  error // why the budget ran out; nil while it lasts
}

func newBudget(l Limits) *evalBudget { return &evalBudget{limits: l} }

// Cancel is called when the request's context ends.
func (b *evalBudget) Cancel() { b.cancelled.Store(true) }

// Cancelled counts a step and says whether to stop.
func (b *evalBudget) Cancelled() bool {
	if b.steps.Add(1) > b.limits.MaxSteps {
		b.exceed(fmt.Errorf("%w: they took more than %d evaluation steps (a rule that loops over numbers.range or builds large collections?)", ErrTooExpensive, b.limits.MaxSteps))
		return true
	}
	return b.cancelled.Load()
}

// charge counts n bytes a builtin made; it is an error once the
// evaluation's builtins have made more than MaxEvaluationBytes.
func (b *evalBudget) charge(name string, n int64) error {
	if total := b.made.Add(n); total > b.limits.MaxEvaluationBytes {
		err := fmt.Errorf("%w: its builtins made more than %d bytes in all (%s among them)", ErrTooExpensive, b.limits.MaxEvaluationBytes, name)
		b.exceed(err)
		return err
	}
	return nil
}

func (b *evalBudget) exceed(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exceeded == nil {
		b.exceeded = err
	}
}

func (b *evalBudget) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exceeded
}

// watch cancels the evaluation when ctx ends; OPA does this itself only
// when it owns the Cancel.
func (b *evalBudget) watch(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, b.Cancel)
}

// explain turns OPA's error for a stopped evaluation into the reason it
// stopped: the budget, the context, or the error as it is.
func (b *evalBudget) explain(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if over := b.err(); over != nil {
		return over
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(context.Cause(ctx), errOutOfTime) {
			return fmt.Errorf("%w: they took longer than %v", ErrTooExpensive, b.limits.MaxEvaluationTime)
		}
		return ctxErr
	}
	return err
}

// errOutOfTime is why an evaluation's own deadline (MaxEvaluationTime)
// ended it, as against the caller's.
var errOutOfTime = errors.New("the evaluation took longer than its limit")

// Pool bounds the evaluations running at once among the engines that
// share it. Evaluating is pure CPU work: more at once than there are CPUs
// only multiplies the memory they hold. Whoever builds engines owns the
// pool and hands the same one to each (policywatch does, so that a
// reload's new engine and the old one finishing its requests share one
// bound); an engine given none makes its own.
type Pool struct {
	slots   chan struct{}
	waiting atomic.Int64
}

// NewPool is a pool of size slots; size <= 0 means twice GOMAXPROCS.
func NewPool(size int) *Pool {
	if size <= 0 {
		size = 2 * runtime.GOMAXPROCS(0)
	}
	return &Pool{slots: make(chan struct{}, size)}
}

// Size is how many evaluations the pool lets run at once.
func (p *Pool) Size() int { return cap(p.slots) }

// Waiting is how many evaluations wait for a slot.
func (p *Pool) Waiting() int64 { return p.waiting.Load() }

func (p *Pool) acquire(ctx context.Context) error {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Pool) release() { <-p.slots }

// Eval runs a prepared query within limits: one of the pool's slots, the
// step budget, the builtin size limits, and ctx's deadline, which cancels
// it between two steps and stops the builtins that check it (see
// stoppable.go). Running past a limit is an error that wraps
// ErrTooExpensive. limits must have its defaults (WithDefaults).
func Eval(ctx context.Context, pool *Pool, query rego.PreparedEvalQuery, input ast.Value, now time.Time, limits Limits) (rego.ResultSet, error) {
	if err := pool.acquire(ctx); err != nil {
		return nil, err
	}
	defer pool.release()
	ctx, cancel := context.WithTimeoutCause(ctx, limits.MaxEvaluationTime, errOutOfTime)
	defer cancel()
	b := newBudget(limits)
	stop := b.watch(ctx)
	defer stop()
	rs, err := query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalTime(now), rego.EvalExternalCancel(b))
	return rs, b.explain(ctx, err)
}
