package sandbox

import (
	"context"
	"errors"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// RanOutAt runs the queries again, one after another, with a tracer and a
// fresh budget each, until one runs past limits; it returns where that one
// last was in the policies, so that an error can name the rule that ran
// out. When none runs out, it is where the last query last was; nil when
// that left no trace. Tracing is slow: the engine's load-time cost check
// calls this only once a sample has run out.
func RanOutAt(ctx context.Context, queries []rego.PreparedEvalQuery, input ast.Value, now time.Time, limits Limits) *ast.Location {
	last := &lastLocation{}
	for _, query := range queries {
		last.loc = nil
		b := newBudget(limits)
		_, err := query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalTime(now), rego.EvalExternalCancel(b), rego.EvalQueryTracer(last))
		if errors.Is(b.explain(ctx, err), ErrTooExpensive) {
			break
		}
	}
	return last.loc
}

// lastLocation remembers where the evaluation last was.
type lastLocation struct{ loc *ast.Location }

func (l *lastLocation) Enabled() bool { return true }

func (l *lastLocation) TraceEvent(ev topdown.Event) {
	if ev.Location != nil && ev.Location.File != "" {
		l.loc = ev.Location
	}
}

func (l *lastLocation) Config() topdown.TraceConfig { return topdown.TraceConfig{} }
