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
	// MaxConcurrent bounds the evaluations that run at once. Evaluating is
	// pure CPU work: more at once than there are CPUs only multiplies the
	// memory they hold. 0 means twice GOMAXPROCS.
	MaxConcurrent int
	// MaxEvaluationTime bounds one evaluation's time where its context
	// does not bound it sooner (lint, the load-time cost check); a call of
	// a regular expression or a glob stops then too (see stoppable.go).
	MaxEvaluationTime time.Duration
}

// DefaultLimits are generous for the built-in rules: a thousand times the
// steps they take on a large object, and outputs far above any object
// etcd stores.
var DefaultLimits = Limits{MaxSteps: 250_000, MaxBuiltinBytes: 1 << 20, MaxEvaluationBytes: 16 << 20, MaxEvaluationTime: 10 * time.Second}

// WithDefaults is l with DefaultLimits for its zero fields, and twice
// GOMAXPROCS for MaxConcurrent.
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
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = 2 * runtime.GOMAXPROCS(0)
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

// evaluations bounds the evaluations running at once in this process,
// across engines: a reload builds a new engine while the old one finishes.
type evaluations struct {
	once  sync.Once
	slots chan struct{}
}

var running evaluations

func (e *evaluations) acquire(ctx context.Context, limit int) error {
	e.once.Do(func() { e.slots = make(chan struct{}, limit) })
	select {
	case e.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *evaluations) release() { <-e.slots }

// Eval runs a prepared query within limits: one of the process's
// evaluation slots, the step budget, the builtin size limits, and ctx's
// deadline, which cancels it between two steps. Running past a limit is
// an error that wraps ErrTooExpensive. limits must have its defaults
// (WithDefaults).
func Eval(ctx context.Context, query rego.PreparedEvalQuery, input ast.Value, now time.Time, limits Limits) (rego.ResultSet, error) {
	if err := running.acquire(ctx, limits.MaxConcurrent); err != nil {
		return nil, err
	}
	defer running.release()
	ctx, cancel := context.WithTimeoutCause(ctx, limits.MaxEvaluationTime, errOutOfTime)
	defer cancel()
	b := newBudget(limits)
	stop := b.watch(ctx)
	defer stop()
	rs, err := query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalTime(now), rego.EvalExternalCancel(b))
	return rs, b.explain(ctx, err)
}
