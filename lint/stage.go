package lint

import (
	"context"

	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/policies"
)

// Stage is one check lint runs on every Karpenter object of the input, in
// the order of Options.Stages and before the policy rules, which always run
// last. CRD schema validation is a stage.
//
// Check is called on several goroutines at once, each with its own object:
// a stage holds no per-object state and compiles what it needs (schemas,
// CEL programs) before the run. It may replace obj.Content with the object
// later stages and the rules should see (with the API server's defaults
// applied, say) but must not keep obj after it returns: lint streams its
// input and lets each object go once it is checked. Findings with Waived
// set are reported as waived.
type Stage interface {
	Check(ctx context.Context, obj *manifest.Object) ([]policies.Finding, error)
}

// StageFunc adapts a function to Stage.
type StageFunc func(ctx context.Context, obj *manifest.Object) ([]policies.Finding, error)

// Check calls f.
func (f StageFunc) Check(ctx context.Context, obj *manifest.Object) ([]policies.Finding, error) {
	return f(ctx, obj)
}
