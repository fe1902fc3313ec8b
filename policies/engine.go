package policies

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
	"github.com/karpgate/karpgate/policies/memo"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// Options configure an Engine.
type Options struct {
	// Config is karpgate.yaml; nil means config.Default().
	Config *config.Config
	// PolicyDirs and DataDirs are the --policy and --data folders.
	PolicyDirs []string
	DataDirs   []string
	// Now is the clock for time-dependent rules (budget windows); nil
	// means time.Now. Tests and `lint --now` pin it.
	Now func() time.Time
	// Limits bound each evaluation; zero fields mean sandbox.DefaultLimits.
	Limits sandbox.Limits
	// SkipCostCheck leaves out the load-time cost check on sample objects:
	// for a caller that has run it already, in a process of its own (karpgate
	// serve, so that a policy that allocates without bound costs a child
	// process and not the replica answering the webhooks).
	SkipCostCheck bool

	// evaluateEveryRuleEveryTime turns off the rule groups' memo, for tests
	// that compare with it.
	evaluateEveryRuleEveryTime bool
}

// Engine evaluates the compiled rule set. It is immutable after New and
// safe for concurrent use; to apply a new configuration or new policies,
// build a new Engine and swap it in.
type Engine struct {
	cfg     *config.Config
	catalog Catalog
	byKey   map[string]Rule
	queries queries
	// selected says which of the queries' selections have rules for a
	// kind at a point; the others are not evaluated.
	selected dispatchTable
	// wholeObjects: a --policy rule reads input.inventory, so cross-object
	// evaluation keeps whole objects; see CrossObjectPaths.
	wholeObjects bool
	now          func() time.Time
	// budgets is shared by the budget builtins of every query.
	budgets *budgetfuncs.Cache
	// groups are the rules memoized by their footprint, and groupRuns
	// what they found; see groups.go.
	groups    []*memo.Group
	groupRuns *memo.Memo[[]rawViolation]
	limits    sandbox.Limits
}

// New loads, checks and compiles the built-in rules with the user's
// policies and data.
func New(ctx context.Context, opts Options) (*Engine, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	set, err := loadPolicySet(opts.PolicyDirs, opts.DataDirs, false)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckRuleIDs(func(id string) bool { _, ok := set.catalog.Lookup(id); return ok }); err != nil {
		return nil, err
	}
	if err := checkPatchesDeclared(set.modules, set.catalog); err != nil {
		return nil, err
	}
	compiler, err := sandbox.Compile(set.modules, budgetfuncs.Declarations())
	if err != nil {
		return nil, err
	}
	if err := checkRulesDefineViolation(compiler, set.catalog); err != nil {
		return nil, err
	}
	groups, wholeObjects := classifyRules(compiler, set.catalog, cfg, !opts.evaluateEveryRuleEveryTime)
	store, selected, err := newStore(set, cfg, groups)
	if err != nil {
		return nil, err
	}
	budgets := budgetfuncs.NewCache()
	qs, err := prepareQueries(ctx, compiler, store, budgets, groups)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cfg: cfg, catalog: set.catalog, byKey: map[string]Rule{}, queries: qs, selected: selected, wholeObjects: wholeObjects, now: opts.Now,
		budgets: budgets, groups: groups, groupRuns: memo.New[[]rawViolation](budgets), limits: opts.Limits.WithDefaults(),
	}
	if e.now == nil {
		e.now = time.Now
	}
	for _, r := range set.catalog {
		e.byKey[r.key] = r
	}
	if opts.SkipCostCheck {
		return e, nil
	}
	if err := e.checkCost(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func checkRulesDefineViolation(c *ast.Compiler, catalog Catalog) error {
	for _, r := range catalog {
		ref := ast.MustParseRef(r.Package).Append(ast.StringTerm("violation"))
		if len(c.GetRulesExact(ref)) == 0 {
			return fmt.Errorf("%s: rule %s (%s) defines no `violation contains ...` rule, so it can never report", r.File, r.ID, r.Package)
		}
	}
	return nil
}

// checkPatchesDeclared refuses a rule whose violation is an object literal
// with a "patch" key (the usual way to return a mutation) but that does not
// declare custom.mutates, which the mutating webhook selects rules by. It
// reads the modules as parsed: compiling rewrites head terms into variables.
func checkPatchesDeclared(modules map[string]*ast.Module, catalog Catalog) error {
	byPackage := map[string]Rule{}
	for _, r := range catalog {
		byPackage[r.Package] = r
	}
	for _, m := range modules {
		r, isRule := byPackage[m.Package.Path.String()]
		if !isRule || r.Mutates {
			continue
		}
		for _, rule := range m.Rules {
			if rule.Head.Name.String() != "violation" && rule.Head.Ref().String() != "violation" {
				continue
			}
			if rule.Head.Key == nil {
				continue
			}
			if obj, ok := rule.Head.Key.Value.(ast.Object); ok && obj.Get(ast.StringTerm("patch")) != nil {
				return fmt.Errorf("%s: rule %s returns a \"patch\" but does not declare `mutates: true` under custom in its METADATA, so the mutating webhook would never run it", r.File, r.ID)
			}
		}
	}
	return nil
}

// Catalog returns every rule, built-in and user, ordered by ID.
func (e *Engine) Catalog() Catalog { return e.catalog }

// Config returns the configuration the engine was built with.
func (e *Engine) Config() *config.Config { return e.cfg }

// Handles reports whether the engine has rules for objects of this
// apiVersion and kind; callers skip (and count) everything else.
func Handles(apiVersion, kind string) bool {
	_, _, ok := karpenter.LookupKind(apiVersion, kind)
	return ok
}

// Now is the engine's clock: the instant time-dependent rules judge by
// when a request does not pin one.
func (e *Engine) Now() time.Time { return e.now() }

// Evaluate runs every enabled rule for the object's kind in one query.
func (e *Engine) Evaluate(ctx context.Context, req Request) (*Result, error) {
	// OPA notices cancellation only between steps; a request whose deadline
	// has already passed should not start.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	point := req.Point
	if point == "" {
		point = config.CI
	}
	in := e.newEvalInput(req, point)
	now := req.Now
	if now.IsZero() {
		now = e.now()
	}
	ref := objectRef(req.Object)
	kind, _ := req.Object["kind"].(string)
	selection := selectionFor(req)
	var vs []rawViolation
	if e.selected.has(selection, point, kind) {
		input, _, err := in.rego()
		if err != nil {
			return nil, err
		}
		if vs, err = e.violations(ctx, e.queries.selections[selection], input, now, ref); err != nil {
			return nil, err
		}
	}
	for i, g := range e.groups {
		if g.Mutates != req.MutationsOnly || !g.Applies[point][kind] {
			continue
		}
		groupVs, err := e.groupViolations(ctx, g, i, in, now, ref)
		if err != nil {
			return nil, err
		}
		vs = append(vs, groupVs...)
	}
	return e.result(vs, point, waiversOf(req.Object))
}

// rawViolation is one member of a rule's violation set, as evaluated.
type rawViolation struct {
	key string // the rule package's last segment
	v   any
}

// violations evaluates one prepared query.
func (e *Engine) violations(ctx context.Context, query rego.PreparedEvalQuery, input ast.Value, now time.Time, ref string) ([]rawViolation, error) {
	rs, err := sandbox.Eval(ctx, query, input, now, e.limits)
	if err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", ref, err)
	}
	vs := make([]rawViolation, 0, len(rs))
	for _, r := range rs {
		key, _ := r.Bindings["pkg"].(string)
		vs = append(vs, rawViolation{key: key, v: r.Bindings["v"]})
	}
	return vs, nil
}

// result turns violations into findings, with the object's waivers applied.
func (e *Engine) result(vs []rawViolation, point config.EnforcementPoint, waivers map[string]string) (*Result, error) {
	res := &Result{}
	for _, v := range vs {
		rule, ok := e.byKey[v.key]
		if !ok {
			continue
		}
		f, err := e.finding(rule, v.v, point)
		if err != nil {
			return nil, err
		}
		if reason, waived := waivers[rule.ID]; waived && rule.Waivable {
			f.Waived, f.WaiverReason = true, reason
			res.Waived = append(res.Waived, f)
			continue
		}
		res.Findings = append(res.Findings, f)
	}
	SortFindings(res.Findings)
	SortFindings(res.Waived)
	return res, nil
}

func (e *Engine) finding(rule Rule, v any, point config.EnforcementPoint) (Finding, error) {
	got, err := decodeViolation(v)
	if err != nil || got.Msg == "" {
		raw, _ := json.Marshal(v)
		return Finding{}, fmt.Errorf("%s: rule %s: a violation must be an object with a string msg and optional path, fix and patch; got %s", rule.File, rule.ID, raw)
	}
	if len(got.Patch) > 0 && !rule.Mutates {
		return Finding{}, fmt.Errorf("%s: rule %s returned a patch but does not declare `mutates: true` under custom in its METADATA", rule.File, rule.ID)
	}
	f := Finding{
		RuleID:   rule.ID,
		Title:    rule.Title,
		Severity: e.cfg.SeverityFor(rule.ID, rule.Severity),
		Action:   e.cfg.ActionFor(rule.ID, rule.DefaultAction(point), point),
		Message:  got.Msg,
		Path:     got.Path,
		Fix:      got.Fix,
		Patch:    got.Patch,
	}
	if f.Fix == "" {
		f.Fix = rule.Fix
	}
	return f, nil
}

// SortFindings orders one object's findings as Evaluate returns them; see
// CompareFindings.
func SortFindings(fs []Finding) { slices.SortStableFunc(fs, CompareFindings) }

// CompareFindings orders findings by rule ID, then path, then message, then
// fix:
// callers that merge findings from several evaluations or stages sort them
// with it, so the order never depends on which ran first.
func CompareFindings(a, b Finding) int {
	return cmp.Or(strings.Compare(a.RuleID, b.RuleID), strings.Compare(a.Path, b.Path), strings.Compare(a.Message, b.Message), strings.Compare(a.Fix, b.Fix))
}

func objectRef(o map[string]any) string {
	kind, _ := o["kind"].(string)
	metadata, _ := o["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	if name == "" {
		name = "<unnamed>"
	}
	return kind + "/" + name
}

// ReportSchema turns what the API server would refuse about an object
// (found offline by lint's CRD schema stage) into findings: the rules under
// rules/schema/ each report one class of violation from input.schema, so
// that their actions, severities and waivers are configured like any
// rule's. Only those rules run; Evaluate leaves them out.
func (e *Engine) ReportSchema(ctx context.Context, object map[string]any, vs []SchemaViolation) (*Result, error) {
	if len(vs) == 0 {
		return &Result{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in, _, err := e.input(Request{Object: object}, config.CI)
	if err != nil {
		return nil, err
	}
	schema, err := schemaValue(vs)
	if err != nil {
		return nil, fmt.Errorf("%s: schema verdict: %w", objectRef(object), err)
	}
	in.Insert(ast.StringTerm("schema"), ast.NewTerm(schema))
	ref := objectRef(object)
	found, err := e.violations(ctx, e.queries.selections[selectSchema], in, e.now(), ref)
	if err != nil {
		return nil, err
	}
	return e.result(found, config.CI, waiversOf(object))
}
