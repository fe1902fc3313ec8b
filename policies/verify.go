package policies

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/karpgate/karpgate/config"
)

// TestOptions select the Rego unit tests to run.
type TestOptions struct {
	PolicyDirs []string
	DataDirs   []string
	// Config is what data.karpgate.config holds during the tests; nil
	// means the defaults. Tests override it with `with`.
	Config *config.Config
	// Run, when set, is a regular expression a test's package-qualified
	// name must match.
	Run string
}

// TestResult is the outcome of one `test_` rule.
type TestResult struct {
	Package  string        `json:"package"`
	Name     string        `json:"name"`
	File     string        `json:"file"`
	Line     int           `json:"line"`
	Builtin  bool          `json:"builtin"`
	Passed   bool          `json:"passed"`
	Skipped  bool          `json:"skipped,omitempty"`
	Error    string        `json:"error,omitempty"`
	Output   string        `json:"output,omitempty"` // what print() wrote
	Duration time.Duration `json:"durationNanos"`
}

// RunTests runs the `test_` rules of the built-in rules and of the user's
// policy folders, with karpgate's builtins and restricted capabilities, as
// `karpgate verify` and `go test` do.
func RunTests(ctx context.Context, opts TestOptions) ([]TestResult, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	set, err := loadPolicySet(opts.PolicyDirs, opts.DataDirs, true)
	if err != nil {
		return nil, err
	}
	store, err := newStore(set, cfg)
	if err != nil {
		return nil, err
	}
	runner := tester.NewRunner().
		SetCompiler(newCompiler()).
		SetStore(store).
		AddCustomBuiltins(testerBuiltins()).
		CapturePrintOutput(true).
		RaiseBuiltinErrors(true).
		Filter(opts.Run).
		SetModules(set.modules)
	ch, err := runner.RunTests(ctx, nil)
	if err != nil {
		var compileErrs ast.Errors
		if errors.As(err, &compileErrs) {
			return nil, explainCompileErrors(compileErrs)
		}
		return nil, err
	}
	var results []TestResult
	for r := range ch {
		t := TestResult{
			Package:  strings.TrimPrefix(r.Package, "data."),
			Name:     r.Name,
			Passed:   r.Pass(),
			Skipped:  r.Skip,
			Output:   string(r.Output),
			Duration: r.Duration,
		}
		if r.Location != nil {
			t.File, t.Line = r.Location.File, r.Location.Row
			t.Builtin = strings.HasPrefix(t.File, builtinPrefix)
		}
		if r.Error != nil {
			t.Error = r.Error.Error()
		} else if r.Fail {
			t.Error = "the test's body was false or undefined"
		}
		results = append(results, t)
	}
	slices.SortFunc(results, func(a, b TestResult) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return results, nil
}
