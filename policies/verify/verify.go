package verify

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
)

// Rego unit tests follow `opa test`'s conventions: a rule named test_* is a
// test, todo_test_* is a skipped one, and --run matches the test's full
// name (data.<package>.<rule>). karpgate runs them itself rather than
// through OPA's tester package, which links Go's testing package (for its
// benchmarks) into whatever imports it: the shipped binary must not.
const (
	testPrefix     = "test_"
	skipTestPrefix = "todo_test_"
)

// Options select the Rego unit tests to run.
type Options struct {
	PolicyDirs []string
	DataDirs   []string
	// Config is what data.karpgate.config holds during the tests; nil
	// means the defaults. Tests override it with `with`.
	Config *config.Config
	// Run, when set, is a regular expression a test's full name
	// (data.<package>.<rule>) must match, as with `opa test --run`.
	Run string
}

// Result is the outcome of one `test_` rule.
type Result struct {
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

// Run runs the `test_` rules of the built-in rules and of the user's
// policy folders, with karpgate's builtins and restricted capabilities, as
// `karpgate verify` and `go test` do.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	var filter *regexp.Regexp
	if opts.Run != "" {
		var err error
		if filter, err = regexp.Compile(opts.Run); err != nil {
			return nil, fmt.Errorf("--run %q: %w", opts.Run, err)
		}
	}
	suite, err := policies.LoadTestSuite(opts.PolicyDirs, opts.DataDirs)
	if err != nil {
		return nil, err
	}
	tests := collectTests(suite.Modules)
	suiteOpts, err := suite.Compile(cfg)
	if err != nil {
		return nil, err
	}
	var results []Result
	for _, t := range tests {
		if filter != nil && !filter.MatchString(t.query) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		results = append(results, t.run(ctx, suiteOpts))
	}
	slices.SortFunc(results, func(a, b Result) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return results, nil
}

// regoTest is one test rule, renamed when its package defines the same
// name more than once so that each definition runs and reports on its own
// (Rego would otherwise OR them together).
type regoTest struct {
	pkg, name, query string
	file             string
	line             int
	skip             bool
	partial          bool
}

// collectTests finds the test rules and gives each repeated name a #NN
// suffix in the modules themselves, before they are compiled.
func collectTests(modules map[string]*ast.Module) []regoTest {
	files := make([]string, 0, len(modules))
	for f := range modules {
		files = append(files, f)
	}
	slices.Sort(files)
	seen := map[string]int{}
	var tests []regoTest
	for _, file := range files {
		m := modules[file]
		pkg := m.Package.Path.String()
		for _, r := range m.Rules {
			ref := r.Head.Ref()
			if len(ref) != 1 {
				continue // test rules are plain names, not refs
			}
			name := r.Head.Name.String()
			if v, ok := ref[0].Value.(ast.Var); ok {
				name = string(v)
			}
			skip := strings.HasPrefix(name, skipTestPrefix)
			if !skip && !strings.HasPrefix(name, testPrefix) {
				continue
			}
			key := pkg + "." + name
			if n := seen[key]; n > 0 {
				name = fmt.Sprintf("%s#%02d", name, n)
				r.Head.Name = ast.Var(name)
				r.Head.Reference = ast.Ref{ast.VarTerm(name)}
			}
			seen[key]++
			loc := r.Loc()
			t := regoTest{
				pkg: strings.TrimPrefix(pkg, "data."), name: name,
				query:   pkg + "." + name,
				skip:    skip,
				partial: r.Head.DocKind() != ast.CompleteDoc,
			}
			if loc != nil {
				t.file, t.line = loc.File, loc.Row
			}
			tests = append(tests, t)
		}
	}
	return tests
}

// run evaluates the test with suiteOpts, the suite's compiler, store and
// builtins.
func (t regoTest) run(ctx context.Context, suiteOpts []func(*rego.Rego)) Result {
	res := Result{Package: t.pkg, Name: t.name, File: t.file, Line: t.line, Builtin: strings.HasPrefix(t.file, policies.BuiltinFilePrefix)}
	if t.skip {
		res.Skipped, res.Passed = true, true
		return res
	}
	var printed bytes.Buffer
	var builtinErrs []topdown.Error
	// The query is a reference built from parsed names, so quoting a
	// renamed test's "#" is what keeps it a valid reference.
	query := ast.MustParseRef(t.pkgRef()).Append(ast.StringTerm(t.name))
	opts := append(slices.Clip(suiteOpts),
		rego.ParsedQuery(ast.NewBody(ast.NewExpr(ast.NewTerm(query)))),
		rego.PrintHook(topdown.NewPrintHook(&printed)),
		rego.EnablePrintStatements(true),
		rego.BuiltinErrorList(&builtinErrs),
		rego.StrictBuiltinErrors(false),
	)
	start := time.Now()
	rs, err := rego.New(opts...).Eval(ctx)
	res.Duration = time.Since(start)
	res.Output = printed.String()
	switch {
	case err != nil:
		res.Error = err.Error()
	case len(builtinErrs) == 1:
		res.Error = builtinErrs[0].Error()
	case len(builtinErrs) > 1:
		res.Error = fmt.Sprint(builtinErrs)
	case len(rs) == 0 || len(rs[0].Expressions) == 0:
		res.Error = "the test's body was false or undefined"
	case !passed(rs[0].Expressions[0].Value, t.partial):
		res.Error = "the test's body was false or undefined"
	default:
		res.Passed = true
	}
	return res
}

func (t regoTest) pkgRef() string { return "data." + t.pkg }

// passed reads a test's value: true for a complete test; for a test
// defined as a partial set or object, every member must be true.
func passed(v any, partial bool) bool {
	if !partial {
		b, ok := v.(bool)
		return ok && b
	}
	switch x := v.(type) {
	case map[string]any:
		for _, m := range x {
			if b, ok := m.(bool); !ok || !b {
				return false
			}
		}
		return true
	case []any:
		return true // a set of test-case names: each member is a case that held
	}
	return false
}
